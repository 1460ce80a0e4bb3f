// The request gate's pacing, on a fake clock: at 600 requests a minute, starts are 100 ms apart; 0 means
// no pacing (SYNC_GITHUB_REQUESTS_PER_MINUTE=0, as the CLI test runs against its local stand-in).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeClock } from '../../../../test/fake-clock.ts';
import { RequestGate } from './github.gate.ts';

async function starts(
  perMinute: number,
  concurrency: number,
  requests: number,
): Promise<{ at: number[]; sleeps: number[] }> {
  const clock = fakeClock(0);
  const gate = new RequestGate({ clock, concurrency, perMinute });
  const at: number[] = [];
  await Promise.all(
    Array.from({ length: requests }, async () => {
      await gate.acquire();
      at.push(clock.now());
      await new Promise((resolve) => setImmediate(resolve));
      gate.release();
    }),
  );
  return { at, sleeps: clock.sleeps };
}

test('600 requests a minute: each start is 100 ms after the one before, one at a time or several in flight', async () => {
  for (const concurrency of [1, 3]) {
    const { at } = await starts(600, concurrency, 6);
    assert.deepEqual(at, [0, 100, 200, 300, 400, 500], `concurrency ${concurrency}`);
  }
  const slow = await starts(7, 1, 3);
  assert.deepEqual(slow.at, [0, 8572, 17144], '60 000 / 7 rounded up');
});

test('0 requests a minute: no pacing, no sleep', async () => {
  const { at, sleeps } = await starts(0, 2, 5);
  assert.deepEqual(at, [0, 0, 0, 0, 0]);
  assert.deepEqual(sleeps, []);
});
