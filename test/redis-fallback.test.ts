// The fallback to per-instance counting when a connected Redis refuses the counts (issue 29: every Redis error fell
// back silently, /metrics still saying the limit was shared). Here the instance's own Redis (a private one, both
// passes) is made a replica while the service runs, so that each count gets READONLY, as from a primary demoted by a
// failover; then it is a primary again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { buildTestApp, type TestApp } from './app.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';
import { until } from './redis-topologies.ts';
import { FALLBACK_ENDED, FALLBACK_STARTED } from '../src/access/shared-counting.ts';

let redis: PrivateRedis;
let upstream: PrivateRedis;
let client: Redis;
let t: TestApp;
// The limit's one-second windows on a clock of the test's own (as test/rate-limit-cache.test.ts).
let now = Date.now();
const freshSecond = () => (now = (Math.floor(now / 1000) + 1) * 1000 + 5);

before(async () => {
  redis = await startPrivateRedis();
  upstream = await startPrivateRedis();
  client = new Redis(redis.url);
  t = await buildTestApp({
    env: { REDIS_URL: redis.url, REDIS_PREFIX: 'fallback:', RATE_LIMIT_PER_SECOND: '10' },
    captureLogs: true,
    clock: () => now,
  });
  await until(() => t.app.shared.counter.shared, 5_000, 'counting in Redis');
});

after(async () => {
  client?.disconnect();
  await t?.close();
  await redis?.stop();
  await upstream?.stop();
});

const burst = (n: number, remoteAddress = '10.9.0.1') =>
  Promise.all(Array.from({ length: n }, () => t.app.inject({ url: '/api/v0/chapters/', remoteAddress })));

const lines = (message: string) =>
  t
    .logs()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${message}"`));

async function metric(): Promise<number> {
  const text = (await t.app.inject({ url: '/metrics' })).body;
  return Number(/^cds_rate_limit_shared (\d+)$/m.exec(text)![1]);
}

test('READONLY: counted per instance, logged once with the reason, metric 0; shared again once writable, logged once', async () => {
  assert.equal(await metric(), 1);
  freshSecond();
  assert.equal((await burst(11)).filter((r) => r.statusCode === 429).length, 1, 'counted in Redis');
  assert.equal(await client.get(`fallback:rl:ip:10.9.0.1:${Math.floor(now / 1000)}`), '11');

  await client.replicaof('127.0.0.1', String(new URL(upstream.url).port));
  // Three seconds' worth of bursts: every request answered, counted here; one line, however many requests.
  for (let second = 0; second < 3; second++) {
    freshSecond();
    const statuses = (await burst(11)).map((r) => r.statusCode);
    assert.ok(
      statuses.every((status) => status === 200 || status === 429),
      statuses.join(),
    );
  }
  freshSecond();
  assert.equal((await burst(11)).filter((r) => r.statusCode === 429).length, 1, 'the limit holds, counted locally');
  assert.equal(await metric(), 0);
  const started = lines(FALLBACK_STARTED);
  assert.equal(started.length, 1, t.logs());
  assert.match(started[0]!, /READONLY/);
  assert.deepEqual(lines(FALLBACK_ENDED), []);

  await client.replicaof('NO', 'ONE');
  await until(async () => (await metric()) === 1, 5_000, 'shared again');
  freshSecond();
  assert.equal((await burst(11, '10.9.0.2')).filter((r) => r.statusCode === 429).length, 1);
  assert.equal(await client.get(`fallback:rl:ip:10.9.0.2:${Math.floor(now / 1000)}`), '11', 'counted in Redis again');
  assert.equal(lines(FALLBACK_STARTED).length, 1);
  assert.equal(lines(FALLBACK_ENDED).length, 1);
});
