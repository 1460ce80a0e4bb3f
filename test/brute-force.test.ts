// The brute-force guard on API keys (issue 13, F2 and F5): wrong keys from one address are limited,
// atomically (concurrent attempts cannot slip past the limit, locally or through Redis), but a valid
// key is always served, whoever else shares its address; behind a trusted proxy (TRUST_PROXY) the
// address is the client's from X-Forwarded-For.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, type Browser } from './auth.ts';
import { generateApiKey } from '../src/api-keys/api-keys.format.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';
import { tickingTimers } from './fake-clock.ts';

const LIMIT = 30;
// The guard counts per minute: a fixed time keeps every attempt of a test in one window.
const clock = () => 1_800_000_000_000 + 30_000;
// The memory of known keys reloads at most once a second: on a ticking clock, without waiting for it.
const timers = tickingTimers();
const GUARD = { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required', AUTH_FAILURES_PER_MINUTE: String(LIMIT) };

let t: TestApp;
let browser: Browser;
let redis: PrivateRedis;
const others: TestApp[] = [];

before(async () => {
  t = await buildTestApp({ env: GUARD, clock, timers });
  browser = await devSignIn(t, 'guarded');
  redis = await startPrivateRedis();
});
after(async () => {
  for (const other of others) await other.close();
  await t.close();
  await redis.stop();
});

async function newKey(target: TestApp = t, signedIn: Browser = browser): Promise<string> {
  // A day after the app's (fixed) time, on which keys expire.
  const expiresAt = new Date(clock() + 86_400_000).toISOString();
  const res = await graphql(target, signedIn, DOC.createApiKey, { name: 'guarded', expiresAt });
  return res.json().data.createApiKey.rawKey as string;
}

async function instance(env: Record<string, string>): Promise<TestApp> {
  const other = await buildTestApp({ env: { ...GUARD, ...env }, sharedDatabase: t.database, clock, timers });
  others.push(other);
  return other;
}

const get = (target: TestApp, key: string, remoteAddress: string, headers: Record<string, string> = {}) =>
  target.app.inject({
    method: 'GET',
    url: '/api/v0/chapters/?limit=1',
    remoteAddress,
    headers: { 'x-api-key': key, ...headers },
  });

const statuses = (responses: { statusCode: number }[]) => {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.statusCode] = (counts[r.statusCode] ?? 0) + 1;
  return counts;
};

test('past the limit of wrong keys, an address gets 429 for wrong keys and 200 for valid ones (even new ones)', async () => {
  const address = '10.13.0.1';
  const wrong = [];
  for (let i = 0; i < LIMIT + 10; i++) wrong.push(await get(t, generateApiKey().raw, address));
  assert.deepEqual(statuses(wrong), { 401: LIMIT, 429: 10 });
  assert.equal((await get(t, 'not-a-key', address)).statusCode, 429, 'malformed keys too');

  // A key never used before (not in any memory), from the same address, interleaved with the attack.
  const valid = await newKey();
  const mixed = [];
  for (let i = 0; i < 20; i++) mixed.push(await get(t, valid, address), await get(t, generateApiKey().raw, address));
  assert.deepEqual(statuses(mixed.filter((_, i) => i % 2 === 0)), { 200: 20 }, 'the valid key');
  assert.deepEqual(statuses(mixed.filter((_, i) => i % 2 === 1)), { 429: 20 }, 'the wrong keys');

  // A key created after the guard loaded the list of valid keys, through another instance.
  const other = await instance({});
  const later = await newKey(other, await devSignIn(other, 'later'));
  assert.equal((await get(t, later, address)).statusCode, 200);
  assert.equal((await get(t, valid, '10.13.0.2')).statusCode, 200, 'other addresses are not concerned');
  assert.equal((await get(t, generateApiKey().raw, '10.13.0.2')).statusCode, 401);
});

for (const shared of [false, true]) {
  test(`300 concurrent wrong keys from one address: exactly the limit reach the database (${shared ? 'counted in Redis' : 'counted locally'})`, async () => {
    const target = await instance(shared ? { REDIS_URL: redis.url, REDIS_PREFIX: 'guard:' } : { REDIS_URL: '' });
    if (shared)
      for (let i = 0; i < 100 && !target.app.shared.counter.shared; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(target.app.shared.counter.shared, shared);
    const address = shared ? '10.13.1.2' : '10.13.1.1';
    const responses = await Promise.all(Array.from({ length: 300 }, () => get(target, generateApiKey().raw, address)));
    // A 401 for a well-formed key means the database was asked; 429 means it was not.
    assert.deepEqual(statuses(responses), { 401: LIMIT, 429: 300 - LIMIT });
  });
}

test('TRUST_PROXY: behind a trusted proxy each client has its own count; without it, X-Forwarded-For is ignored', async () => {
  const proxied = await instance({ TRUST_PROXY: '127.0.0.1' });
  const attacker = { 'x-forwarded-for': '198.51.100.7' };
  const neighbour = { 'x-forwarded-for': '198.51.100.8' };
  const attack = [];
  for (let i = 0; i < LIMIT + 1; i++) attack.push(await get(proxied, generateApiKey().raw, '127.0.0.1', attacker));
  assert.equal(attack.at(-1)!.statusCode, 429);
  assert.equal(
    (await get(proxied, generateApiKey().raw, '127.0.0.1', neighbour)).statusCode,
    401,
    'the neighbour has its own count',
  );

  // Not trusted (another proxy address, or none configured): the header cannot pick an address.
  for (const target of [await instance({ TRUST_PROXY: '10.0.0.1' }), await instance({})]) {
    for (let i = 0; i < LIMIT; i++)
      await get(target, generateApiKey().raw, '127.0.0.2', { 'x-forwarded-for': `198.51.100.${i}` });
    assert.equal((await get(target, generateApiKey().raw, '127.0.0.2', neighbour)).statusCode, 429);
  }
});
