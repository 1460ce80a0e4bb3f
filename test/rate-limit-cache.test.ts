// The rate limit (per key, per address, shared through Redis) and the response cache, which must
// never let a request skip authentication or the limit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { chapter } from './factories.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';
import { Redis } from 'ioredis';

const LIMITED = {
  AUTH_DEV_LOGIN: 'true',
  REST_AUTH: 'required',
  RATE_LIMIT_PER_SECOND: '10',
  AUTH_FAILURES_PER_MINUTE: '5',
};

// The limit's one-second windows (and the brute-force guard's) on a clock of the test's own: a new window begins
// when the test says so (freshSecond), never by waiting for the wall clock, and never in the middle of a burst.
let now = Date.now();
const clock = () => now;

/** Moves the clock to the start of the next one-second window, so a burst falls inside one window. */
function freshSecond(): void {
  now = (Math.floor(now / 1000) + 1) * 1000 + 5;
}

let t: TestApp;
let keyA: string;
let keyB: string;
before(async () => {
  t = await buildTestApp({ env: LIMITED, clock });
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
  // The write moved the data version (it records its change): heard now, not at the app's next poll, which would empty
  // the response cache in the middle of a test that expects a HIT (seen once in CI's PGlite pass).
  await t.app.shared.watcher.refresh();
  const browser = await devSignIn(t, 'limited');
  const create = async (name: string) =>
    (await graphql(t, browser, DOC.createApiKey, { name, expiresAt: inDays(3) })).json().data.createApiKey
      .rawKey as string;
  keyA = await create('a');
  keyB = await create('b');
});
after(() => t.close());

type Target = TestApp;
const get = (
  target: Target,
  key: string | undefined,
  url = '/api/v0/chapters/',
  headers: Record<string, string> = {},
  remoteAddress = '127.0.0.1',
) =>
  target.app.inject({
    method: 'GET',
    url,
    remoteAddress,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...headers },
  });

/** Until the instance's Redis connection is ready (it counts in Redis again). */
async function redisReady(target: Target): Promise<void> {
  const redis = target.app.shared.redis!;
  if (redis.status !== 'ready') await once(redis, 'ready');
}

async function burst(target: Target, key: string | undefined, n: number, remoteAddress?: string) {
  return Promise.all(Array.from({ length: n }, () => get(target, key, '/api/v0/chapters/', {}, remoteAddress)));
}

test('the 11th request within a second with one key is 429, and the next second it recovers', async () => {
  freshSecond();
  const responses = await burst(t, keyA, 11);
  const statuses = responses.map((r) => r.statusCode).sort();
  assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
  const limited = responses.find((r) => r.statusCode === 429)!;
  assert.deepEqual(limited.json(), { detail: 'Too many requests.' });
  assert.equal(limited.headers['retry-after'], '1');
  assert.equal(limited.headers['ratelimit-limit'], '10');
  assert.equal(limited.headers['ratelimit-remaining'], '0');
  assert.equal(limited.headers['ratelimit-reset'], '1');
  const ok = responses.find((r) => r.statusCode === 200)!;
  assert.equal(ok.headers['ratelimit-limit'], '10');
  assert.match(String(ok.headers['ratelimit-remaining']), /^\d$/);
  freshSecond();
  assert.equal((await get(t, keyA)).statusCode, 200);
});

test('two keys are counted independently; anonymous requests per address', async () => {
  freshSecond();
  await burst(t, keyA, 12);
  assert.equal((await get(t, keyA)).statusCode, 429);
  assert.equal((await get(t, keyB)).statusCode, 200);

  const open = await buildTestApp({
    env: { REST_AUTH: 'optional', RATE_LIMIT_PER_SECOND: '10' },
    sharedDatabase: t.database,
    clock,
  });
  try {
    freshSecond();
    const first = await burst(open, undefined, 11, '10.0.0.1');
    assert.equal(first.filter((r) => r.statusCode === 429).length, 1);
    assert.equal((await get(open, undefined, '/api/v0/chapters/', {}, '10.0.0.2')).statusCode, 200);
  } finally {
    await open.close();
  }
});

test('a cached response is never served without a valid key, nor past the limit', async () => {
  freshSecond();
  const warm = await get(t, keyB, '/api/v0/chapters/?limit=5');
  assert.equal(warm.statusCode, 200);
  const hit = await get(t, keyB, '/api/v0/chapters/?limit=5');
  assert.equal(hit.headers['x-cache'], 'HIT');
  assert.equal(hit.body, warm.body);
  for (const key of [undefined, 'cds_forged', keyA.slice(0, -1) + (keyA.endsWith('A') ? 'B' : 'A')]) {
    const res = await get(t, key, '/api/v0/chapters/?limit=5');
    assert.equal(res.statusCode, 401, `key ${key}`);
    assert.equal(res.headers['x-cache'], undefined);
    assert.ok(!res.body.includes('london'));
  }
  freshSecond();
  const cached = await Promise.all(Array.from({ length: 11 }, () => get(t, keyB, '/api/v0/chapters/?limit=5')));
  assert.equal(cached.filter((r) => r.statusCode === 429).length, 1);
});

test('repeated wrong keys from one address are slowed down; other addresses are not', async () => {
  const guard = await buildTestApp({ env: LIMITED, sharedDatabase: t.database, clock });
  try {
    const statuses = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await get(guard, 'cds_wrong', '/api/v0/chapters/', {}, '10.9.9.9')).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
    assert.equal((await get(guard, keyB, '/api/v0/chapters/', {}, '10.9.9.8')).statusCode, 200);
  } finally {
    await guard.close();
  }
});

test('ETag on every 200, 304 for a matching If-None-Match, private caching only', async () => {
  freshSecond();
  const first = await get(t, keyB, '/api/v0/chapters/london');
  const etag = first.headers.etag as string;
  assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
  assert.equal(first.headers['cache-control'], 'private, no-cache');
  assert.match(String(first.headers.vary), /X-API-Key/i);
  for (let i = 0; i < 2; i++) {
    const again = await get(t, keyB, '/api/v0/chapters/london', { 'if-none-match': etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal(again.headers.etag, etag);
  }
  assert.equal((await get(t, keyB, '/api/v0/chapters/london', { 'if-none-match': '"other"' })).statusCode, 200);
});

test('a data change empties the cache at once in this instance', async () => {
  freshSecond();
  const before = await get(t, keyB, '/api/v0/chapters/london');
  assert.equal((await get(t, keyB, '/api/v0/chapters/london')).headers['x-cache'], 'HIT');
  await t.database.db
    .updateTable('chapters')
    .set({ name: 'OWASP London (renamed)' })
    .where('key', '=', 'london')
    .execute();
  t.app.shared.watcher.set(await bumpDataVersion(t.database.db));
  const after = await get(t, keyB, '/api/v0/chapters/london');
  assert.equal(after.headers['x-cache'], 'MISS');
  assert.equal(after.json().name, 'OWASP London (renamed)');
  assert.notEqual(after.headers.etag, before.headers.etag);
  assert.equal(
    (await get(t, keyB, '/api/v0/chapters/london', { 'if-none-match': before.headers.etag as string })).statusCode,
    200,
  );
});

test('with Redis the limit is shared by two instances; if Redis stops, both keep serving; it recovers', async () => {
  let redis: PrivateRedis | undefined;
  let one: TestApp | undefined;
  let two: TestApp | undefined;
  try {
    redis = await startPrivateRedis();
    const env = { ...LIMITED, REDIS_URL: redis.url, REDIS_PREFIX: 'shared-test:' };
    one = await buildTestApp({ env, sharedDatabase: t.database, clock });
    two = await buildTestApp({ env, sharedDatabase: t.database, clock });
    await Promise.all([redisReady(one), redisReady(two)]);
    freshSecond();
    const split = [...(await burst(one, keyA, 6)), ...(await burst(two, keyA, 5))];
    assert.equal(split.filter((r) => r.statusCode === 429).length, 1, 'one key, 11 requests over two instances');

    await redis.stop();
    freshSecond();
    const degraded = await Promise.all([burst(one, keyA, 10), burst(two, keyA, 10)]);
    assert.ok(
      degraded.flat().every((r) => r.statusCode === 200),
      'each instance limits on its own while Redis is down',
    );
    assert.equal(
      (await burst(one, keyA, 11)).some((r) => r.statusCode >= 500),
      false,
    );

    await redis.start();
    await Promise.all([redisReady(one), redisReady(two)]);
    freshSecond();
    const shared = [...(await burst(one, keyA, 6)), ...(await burst(two, keyA, 5))];
    assert.equal(shared.filter((r) => r.statusCode === 429).length, 1, 'shared again once Redis is back');
  } finally {
    await one?.close();
    await two?.close();
    await redis?.stop();
  }
});

/**
 * Another instance of the service on the shared test database, with a private Redis, and a client
 * of that Redis standing for what other instances write there. Everything is stopped afterwards.
 */
async function withRedisInstance(prefix: string, body: (one: TestApp, client: Redis) => Promise<void>): Promise<void> {
  const redis = await startPrivateRedis();
  let one: TestApp | undefined;
  const client = new Redis(redis.url);
  try {
    one = await buildTestApp({
      env: { ...LIMITED, REDIS_URL: redis.url, REDIS_PREFIX: prefix },
      sharedDatabase: t.database,
      clock,
    });
    await redisReady(one);
    await body(one, client);
  } finally {
    client.disconnect();
    await one?.close();
    await redis.stop();
  }
}

test('with Redis, a key revoked elsewhere is refused on the next request', async () => {
  // Another instance's revocation as this one sees it at worst: the key is revoked in the database
  // (without the counter that the once-a-second poll reads) and the shared epoch has moved.
  await withRedisInstance('epoch-test:', async (one, client) => {
    const browser = await devSignIn(t, 'epoch');
    const create = async (name: string) =>
      (await graphql(t, browser, DOC.createApiKey, { name, expiresAt: inDays(3) })).json().data.createApiKey;
    const doomed = await create('doomed');
    const kept = await create('kept');
    freshSecond();
    for (const key of [doomed.rawKey, kept.rawKey]) assert.equal((await get(one, key)).statusCode, 200);
    assert.equal((await get(one, doomed.rawKey)).statusCode, 200, 'remembered');

    await t.database.db
      .updateTable('api_keys')
      .set({ is_revoked: true })
      .where('uuid', '=', doomed.apiKey.uuid)
      .execute();
    await client.incr('epoch-test:keys-revoked-epoch');
    const refused = await get(one, doomed.rawKey);
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json(), { detail: "Missing or invalid API key in 'X-API-Key' header" });
    assert.equal((await get(one, kept.rawKey)).statusCode, 200, 'a valid key passes its new check');
    assert.equal((await get(one, doomed.rawKey)).statusCode, 401, 'and stays refused');
  });
});

test('with Redis, data changed elsewhere empties the cache before the next request', async () => {
  // Another instance's import as this one sees it at worst: the database holds new data and a new
  // version, the shared change counter has moved, and the once-a-second poll has not run.
  await withRedisInstance('changes-test:', async (one, client) => {
    await chapter(t.database.db, { key: 'paris', name: 'OWASP Paris' });
    t.app.shared.watcher.set(await bumpDataVersion(t.database.db));
    await one.app.shared.watcher.refresh(); // the new instance's poll has seen that version
    freshSecond();
    await get(one, keyB, '/api/v0/chapters/paris');
    const hit = await get(one, keyB, '/api/v0/chapters/paris');
    assert.equal(hit.headers['x-cache'], 'HIT');

    await t.database.db
      .updateTable('chapters')
      .set({ name: 'OWASP Paris (renamed)' })
      .where('key', '=', 'paris')
      .execute();
    await bumpDataVersion(t.database.db);
    await client.incr('changes-test:data-changes');
    const after = await get(one, keyB, '/api/v0/chapters/paris');
    assert.equal(after.headers['x-cache'], 'MISS');
    assert.equal(after.json().name, 'OWASP Paris (renamed)');
  });
});
