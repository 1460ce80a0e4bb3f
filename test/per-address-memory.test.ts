// Test tier: system (floods the service to prove a memory bound): `npm run test:system`, CI.
// What distinct client addresses can make an instance hold (issue 25): wrong keys from 200,000 addresses, and
// addresses of 8 kB behind a proxy trusted with any X-Forwarded-For, leave the heap within a fixed bound; and what
// is bounded fails safe: the flood unlocks no address that was over the limit of wrong keys, and locks out nobody
// innocent (a valid key is served, a wrong one from a quiet address is 401, not 429).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql } from './auth.ts';

const LIMIT = 30;
const ADDRESSES = 200_000;
const HEAP_BOUND = 20 * 2 ** 20;
// Every attempt in one window of the guard (a minute) and of the rate limit (a second).
const clock = () => 1_800_000_000_000 + 30_000;

let t: TestApp;
let valid = '';
before(async () => {
  t = await buildTestApp({
    env: {
      AUTH_DEV_LOGIN: 'true',
      REST_AUTH: 'required',
      AUTH_FAILURES_PER_MINUTE: String(LIMIT),
      TRUST_PROXY: 'true',
      // Counted locally: what is measured is this instance's memory.
      REDIS_URL: '',
    },
    clock,
  });
  const browser = await devSignIn(t, 'crowded');
  const expiresAt = new Date(clock() + 86_400_000).toISOString();
  valid = (await graphql(t, browser, DOC.createApiKey, { name: 'crowded', expiresAt })).json().data.createApiKey.rawKey;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(() => t.close());

/**
 * Sends wrong keys from the given X-Forwarded-For addresses over one connection, pipelined in batches (the app
 * listening in this process: HTTP costs a fraction of an inject, and the guard's clock is the test's), and counts
 * the answers by status.
 */
async function flood(addresses: (i: number) => string, count: number): Promise<Record<number, number>> {
  const port = (t.app.server.address() as net.AddressInfo).port;
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const statuses: Record<number, number> = {};
  let answered = 0;
  let tail = '';
  let wake: (() => void) | undefined;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    const text = tail + chunk;
    for (const match of text.matchAll(/HTTP\/1\.1 (\d{3}) /g)) {
      statuses[Number(match[1])] = (statuses[Number(match[1])] ?? 0) + 1;
      answered++;
    }
    tail = text.slice(-16).replace(/^.*HTTP\/1\.1 \d{3} /s, '');
    wake?.();
  });
  try {
    for (let from = 0; from < count; from += 5_000) {
      const to = Math.min(count, from + 5_000);
      let batch = '';
      for (let i = from; i < to; i++) {
        batch +=
          'GET /api/v0/chapters/?limit=1 HTTP/1.1\r\nHost: x\r\nX-API-Key: not-a-key\r\n' +
          `X-Forwarded-For: ${addresses(i)}\r\n\r\n`;
      }
      socket.write(batch);
      while (answered < to) await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    socket.destroy();
  }
  return statuses;
}

/** The heap in use after a full collection (the flag set here, since the test runner's processes lack --expose-gc). */
function heapUsed(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const get = (key: string, remoteAddress: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'GET',
    url: '/api/v0/chapters/?limit=1',
    remoteAddress,
    headers: { 'x-api-key': key, ...headers },
  });

const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const MB = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

test(`wrong keys from ${ADDRESSES.toLocaleString('en')} addresses and 8 kB addresses: a bounded heap, nobody unlocked, nobody innocent locked out`, async (t2) => {
  const attacker = '192.0.2.66';
  for (let i = 0; i < LIMIT; i++) assert.equal((await get('not-a-key', attacker)).statusCode, 401);
  assert.equal((await get('not-a-key', attacker)).statusCode, 429, 'the attacker is over the limit');

  await flood((i) => address(ADDRESSES + i), 5_000); // warm-up
  const before = heapUsed();
  const started = performance.now();
  assert.deepEqual(await flood(address, ADDRESSES), { 401: ADDRESSES }, 'one wrong key from each address: 401');
  // Behind a proxy trusted with anything, 8 kB "addresses": one shared count (so, past the limit, 429), not 8 kB each.
  const junk = await flood((i) => `${i}-${'x'.repeat(8_192)}`, 2_000);
  assert.equal(junk[429]! + (junk[401] ?? 0), 2_000);
  assert.ok(junk[429]! >= 2_000 - LIMIT, JSON.stringify(junk));
  const elapsed = performance.now() - started;
  const grown = heapUsed() - before;
  t2.diagnostic(
    `${ADDRESSES + 2_000} wrong keys over HTTP in ${Math.round(elapsed)} ms; heap after a full collection grew by ${MB(grown)} MB`,
  );
  assert.ok(grown < HEAP_BOUND, `the heap grew by ${MB(grown)} MB (bound ${MB(HEAP_BOUND)})`);

  assert.equal((await get('not-a-key', attacker)).statusCode, 429, 'the flood did not unlock the attacker');
  assert.equal((await get(valid, attacker)).statusCode, 200, 'a valid key is served even there');
  assert.equal((await get('not-a-key', '192.0.2.77')).statusCode, 401, 'a quiet address is not locked out');
  assert.equal((await get(valid, '192.0.2.77')).statusCode, 200);
});
