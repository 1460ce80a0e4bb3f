// /readyz while the configured Redis goes away and comes back: a Redis of this file's own (test/redis-server.ts),
// really stopped, so the app's client sees what it would in production (a closed connection, then reconnects).
// Redis down: the instance keeps serving (rate limits per instance), so /readyz stays 200 naming `redis: {ok: false}`
// unless READY_REQUIRES_REDIS=true (then 503). Both apps share one database; each has its own Redis client.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { buildTestApp, type TestApp } from './app.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';

let redis: PrivateRedis;
/** READY_REQUIRES_REDIS unset (the default). */
let lenient: TestApp;
/** READY_REQUIRES_REDIS=true. */
let strict: TestApp;

before(async () => {
  redis = await startPrivateRedis();
  const env = { REDIS_URL: redis.url, REDIS_PREFIX: `cds-ready-${crypto.randomBytes(4).toString('hex')}:` };
  lenient = await buildTestApp({ env });
  strict = await buildTestApp({ env: { ...env, READY_REQUIRES_REDIS: 'true' }, sharedDatabase: lenient.database });
});

after(async () => {
  await strict?.close();
  await lenient?.close();
  await redis?.stop();
});

interface Ready {
  statusCode: number;
  retryAfter: string | undefined;
  body: { status: string; database: { ok: boolean }; redis?: { ok: boolean } };
}

async function readyz(t: TestApp): Promise<Ready> {
  const res = await t.app.inject({ method: 'GET', url: '/readyz' });
  return { statusCode: res.statusCode, retryAfter: res.headers['retry-after'] as string | undefined, body: res.json() };
}

/** Asks /readyz of both apps until their Redis check says `ok` (the client notices a stop or reconnects by itself). */
async function untilRedis(ok: boolean, timeoutMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const answers = await Promise.all([readyz(lenient), readyz(strict)]);
    if (answers.every((answer) => answer.body.redis?.ok === ok)) return performance.now() - started;
    if (performance.now() - started > timeoutMs) {
      throw new Error(`redis.ok is not ${ok} after ${timeoutMs} ms: ${JSON.stringify(answers)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25)); // the Redis process and the client's reconnection
  }
}

test('Redis stops: /readyz stays 200 with redis.ok false (503 with READY_REQUIRES_REDIS=true); back: ok again', async (t) => {
  await untilRedis(true, 5_000);
  for (const app of [lenient, strict]) {
    const up = await readyz(app);
    assert.equal(up.statusCode, 200);
    assert.deepEqual({ status: up.body.status, database: up.body.database.ok }, { status: 'ready', database: true });
  }

  await redis.stop();
  const noticedMs = await untilRedis(false, 5_000);

  const down = await readyz(lenient);
  assert.equal(down.statusCode, 200, 'only Redis is down: the instance still serves');
  assert.equal(down.body.status, 'ready');
  assert.equal(down.body.database.ok, true);
  assert.deepEqual(down.body.redis, { ok: false });
  assert.equal(
    (await lenient.app.inject({ method: 'GET', url: '/api/v0/chapters/?limit=1' })).statusCode,
    200,
    'REST falls back to per-instance limits',
  );

  const required = await readyz(strict);
  assert.equal(required.statusCode, 503, 'READY_REQUIRES_REDIS=true: Redis counts');
  assert.equal(required.retryAfter, '5');
  assert.equal(required.body.status, 'unavailable');
  assert.equal(required.body.database.ok, true);
  assert.deepEqual(required.body.redis, { ok: false });

  await redis.start();
  const backMs = await untilRedis(true, 10_000);
  for (const app of [lenient, strict]) {
    const back = await readyz(app);
    assert.equal(back.statusCode, 200);
    assert.equal(back.body.status, 'ready');
  }
  t.diagnostic(
    `redis.ok false ${Math.round(noticedMs)} ms after the stop, true again ${Math.round(backMs)} ms after the restart`,
  );
});
