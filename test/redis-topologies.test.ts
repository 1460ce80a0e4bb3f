// Test tier: system (starts Redis clusters and the server of its own): `npm run test:system`, CI.
// Two service processes on one PostgreSQL and a Redis Cluster (three primaries), then a Redis behind Sentinel (a
// primary, two replicas, one sentinel), each brought up here (test/redis-topologies.ts) (issue 29): the rate limit is
// global over both instances, a revocation through one is refused by the other at once, a data change announced
// through Redis empties both caches, no CROSSSLOT or MOVED reaches the service (named as one server, the cluster's
// refusals are logged once, not hidden), and after a failover the limit is shared again within 5 s, the fallback
// logged once when it starts and once when it ends, cds_rate_limit_shared 0 while it lasts.
// Two processes cannot share an embedded database, so this needs DATABASE_URL: it runs in CI's PostgreSQL pass only.
// Once is enough: its Redis servers are its own (REDIS_URL, the machine's Redis, plays no part), and what it tests
// does not depend on the database engine; a run in the PGlite pass would need a PostgreSQL of its own for nothing.
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createTestDb, serverUrl, type TestDatabase } from './helpers.ts';
import { buildTestApp } from './app.ts';
import { exited, freePort, startServer, waitFor200 } from './process.ts';
import {
  startRedisCluster,
  startRedisSentinel,
  until,
  type PrivateCluster,
  type PrivateSentinel,
} from './redis-topologies.ts';
import { newKeyOver, readOver as read, revokeOver } from './auth.ts';
import { chapter } from './factories.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';
import { announceDataChanged } from '../src/announcements/announce.ts';
import { FALLBACK_ENDED, FALLBACK_STARTED } from '../src/access/shared-counting.ts';

const skip = serverUrl
  ? false
  : "needs DATABASE_URL: two processes cannot share an embedded database (runs in CI's PostgreSQL pass)";

const LIMIT = 10;
const PREFIX = 'topologies:';
/** Within this long after a failover (the sentinel announces the new primary), both instances count in Redis again. */
const SHARED_AGAIN_MS = 5_000;

let database: TestDatabase;

before(async () => {
  if (skip) return;
  database = await createTestDb();
  await chapter(database.db, { key: 'topology', name: 'OWASP Topology' });
  await bumpDataVersion(database.db);
});

after(async () => {
  if (skip) return;
  await database.drop();
});

type Instance = ChildProcess & { output: () => string; base: string };

/** Two instances with these REDIS_* variables, added to `instances` as they start (stopInstances ends them). */
async function startInstances(instances: Instance[], redisEnv: Record<string, string>): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = startServer({
      DATABASE_URL: database.url!,
      ...redisEnv,
      REDIS_PREFIX: PREFIX,
      PORT: String(port),
      AUTO_IMPORT: 'false',
      AUTH_DEV_LOGIN: 'true',
      REST_AUTH: 'required',
      RATE_LIMIT_PER_SECOND: String(LIMIT),
      // info: the end of a fallback is an info line.
      LOG_LEVEL: 'info',
    });
    instances.push(Object.assign(child, { base: `http://127.0.0.1:${port}` }));
  }
  for (const instance of instances) await waitFor200(`${instance.base}/status/`, 120_000);
}

async function stopInstances(instances: Instance[]): Promise<void> {
  for (const instance of instances) instance.kill('SIGTERM');
  for (const instance of instances) await exited(instance);
}

const newKey = (base: string, login: string) => newKeyOver(base, login, 'topology');

/** cds_rate_limit_shared of an instance's /metrics. */
async function shared(instance: Instance): Promise<number> {
  const text = await (await fetch(`${instance.base}/metrics`)).text();
  return Number(/^cds_rate_limit_shared (\d+)$/m.exec(text)![1]);
}

interface Fallback {
  reason: string;
  /** Its end was logged. */
  ended: boolean;
}

/**
 * The fallbacks to per-instance counting an instance logged since `from` (a length of its output): each start's reason,
 * and whether its end followed. Left out: counts that timed out (the service waits 250 ms for Redis; a machine busy
 * with other tests can stall a process that long) and a cluster's slots not found in time for the same reason, true
 * fallbacks but not ones of the topology.
 */
function fallbacks(instance: Instance, from = 0): Fallback[] {
  const found: Fallback[] = [];
  for (const line of instance.output().slice(from).split('\n')) {
    if (line.includes(`"msg":"${FALLBACK_STARTED}"`)) {
      found.push({ reason: (JSON.parse(line) as { reason: string }).reason, ended: false });
    } else if (line.includes(`"msg":"${FALLBACK_ENDED}"`) && found.length > 0) {
      found[found.length - 1]!.ended = true;
    }
  }
  return found.filter((fallback) => !/timed out|last node: timeout/i.test(fallback.reason));
}

/** The lines of a log that say counting fell back to per instance (each with its reason). */
function fallbackStarts(logs: string): string[] {
  return logs.split('\n').filter((line) => line.includes(`"msg":"${FALLBACK_STARTED}"`));
}

/** An instance's log without the lines of each request: what a failed assertion shows. */
function notes(instance: Instance): string {
  const lines = instance.output().split('\n');
  return lines
    .filter((line) => !/"msg":"(incoming request|request completed)"/.test(line))
    .join('\n')
    .slice(-3000);
}

/** No Redis error of a topology the client does not follow ever reached an instance. */
function assertNoTopologyErrors(instances: Instance[]): void {
  for (const instance of instances) {
    assert.doesNotMatch(instance.output(), /CROSSSLOT|MOVED|READONLY|ASK /, instance.base);
  }
}

/**
 * 20 requests at once with one new key, 10 to each instance: exactly LIMIT answered 200. The windows are the
 * instances' seconds: the burst starts early in one (the machine's clock is theirs), and one that still spans two
 * is tried again with another key. Counted per instance, each burst would be answered 20 times.
 */
async function assertGlobalLimit(instances: Instance[], login: string): Promise<void> {
  const outcomes: string[] = [];
  for (let attempt = 1; attempt <= 5; attempt++) {
    const key = await newKey(instances[0]!.base, `${login}-${attempt}`);
    await until(() => Date.now() % 1000 < 100, 1_500, 'the start of a second', 5);
    const responses = await Promise.all(
      Array.from({ length: 2 * LIMIT }, (_, i) => read(instances[i % 2]!.base, key.raw)),
    );
    const served = responses.filter((r) => r.status === 200).length;
    outcomes.push(`${served} served`);
    if (served > LIMIT) continue;
    assert.deepEqual(responses.map((r) => r.status).sort(), [...Array(LIMIT).fill(200), ...Array(LIMIT).fill(429)]);
    return;
  }
  assert.fail(`no burst within one second was limited to ${LIMIT}: ${outcomes.join(', ')}`);
}

/** A key used on instance 1, revoked through instance 0 (GraphQL): instance 1 refuses it on the next request. */
async function assertRevocationSeen(instances: Instance[], login: string): Promise<void> {
  const key = await newKey(instances[0]!.base, login);
  assert.equal((await read(instances[1]!.base, key.raw)).status, 200);
  assert.equal((await read(instances[1]!.base, key.raw)).status, 200, 'remembered as valid');
  assert.equal(await revokeOver(instances[0]!.base, key), true);
  assert.equal((await read(instances[1]!.base, key.raw)).status, 401);
}

/**
 * A data change announced as an import or sync announces it (announceDataChanged, with the instances' settings):
 * both instances answer the next request from the database, not from the response cache.
 */
async function assertDataChangeSeen(instances: Instance[], login: string, settings: Record<string, unknown>) {
  const key = await newKey(instances[0]!.base, login);
  const url = '/api/v0/chapters/topology';
  for (const { base } of instances) {
    await read(base, key.raw, url);
    assert.equal((await read(base, key.raw, url)).headers.get('x-cache'), 'HIT', base);
  }
  const name = `OWASP Topology ${login}`;
  await database.db.updateTable('chapters').set({ name }).where('key', '=', 'topology').execute();
  await bumpDataVersion(database.db);
  await announceDataChanged({ redisPrefix: PREFIX, ...settings });
  for (const { base } of instances) {
    const res = await read(base, key.raw, url);
    assert.equal(((await res.json()) as { name: string }).name, name, base);
  }
}

/** Waits until every instance counts in Redis (cds_rate_limit_shared 1). */
async function allShared(instances: Instance[]): Promise<void> {
  for (const instance of instances)
    await until(async () => (await shared(instance)) === 1, 10_000, `${instance.base} shared`);
}

describe('a Redis Cluster of three primaries', { skip }, () => {
  let cluster: PrivateCluster;
  const instances: Instance[] = [];
  const settings = () => ({ redisMode: 'cluster', redisUrl: cluster.url });

  before(async () => {
    cluster = await startRedisCluster();
    await startInstances(instances, { REDIS_MODE: 'cluster', REDIS_URL: cluster.url });
  });

  after(async () => {
    await stopInstances(instances);
    await cluster?.stop();
  });

  test('the limit of one key is global over the two instances', async () => {
    // Shared once each instance's cluster client has its slots and a count went through (a moment after the first
    // 200 on a loaded machine: until then each counts on its own, as it says).
    await allShared(instances);
    await assertGlobalLimit(instances, 'cluster-limit');
  });

  test('a key revoked through one instance is refused by the other at once', async () => {
    await allShared(instances);
    await assertRevocationSeen(instances, 'cluster-revoke');
  });

  test('a data change announced through the cluster empties both caches', async () => {
    await assertDataChangeSeen(instances, 'cluster-data', settings());
  });

  test('no CROSSSLOT, MOVED or fallback: the limit stayed shared throughout', async () => {
    for (const instance of instances) {
      // (Polled: a count that timed out on a busy machine is a fallback of a quarter of a second.)
      await until(async () => (await shared(instance)) === 1, 5_000, `${instance.base} shared`);
      assert.deepEqual(fallbacks(instance), [], instance.base);
    }
    assertNoTopologyErrors(instances);
  });

  test('the cluster named as one server (REDIS_MODE unset): counted per instance, said once with the reason', async () => {
    // The setup issue 29 found: every count refused (CROSSSLOT, MOVED), each falling back without a word while
    // cds_rate_limit_shared said 1.
    let now = Math.floor(Date.now() / 1000) * 1000 + 5;
    const misnamed = await buildTestApp({
      env: { REDIS_URL: cluster.url, REDIS_PREFIX: 'misnamed:', RATE_LIMIT_PER_SECOND: String(LIMIT) },
      sharedDatabase: database,
      captureLogs: true,
      clock: () => now,
    });
    try {
      await until(() => misnamed.app.shared.redis!.status === 'ready', 5_000, 'connected to the node');
      now += 1000;
      const burst = await Promise.all(
        Array.from({ length: LIMIT + 1 }, () => misnamed.app.inject({ url: '/api/v0/chapters/' })),
      );
      assert.deepEqual(burst.map((r) => r.statusCode).sort(), [...Array(LIMIT).fill(200), 429], 'counted here');
      const text = (await misnamed.app.inject({ url: '/metrics' })).body;
      assert.match(text, /^cds_rate_limit_shared 0$/m);
      const started = fallbackStarts(misnamed.logs());
      assert.equal(started.length, 1, misnamed.logs());
      assert.match(started[0]!, /CROSSSLOT|MOVED/);
    } finally {
      await misnamed.close();
    }
  });

  test('a cluster that cannot be reached: the fallback names why its last node gave no slots', async () => {
    // ioredis' ClusterAllFailedError says only "Failed to refresh slots cache."; its cause is kept beside it.
    const nobody = await freePort();
    const unreached = await buildTestApp({
      env: { REDIS_MODE: 'cluster', REDIS_URL: `redis://127.0.0.1:${nobody}`, REDIS_PREFIX: 'unreached:' },
      sharedDatabase: database,
      captureLogs: true,
    });
    try {
      const started = () => fallbackStarts(unreached.logs());
      await until(() => started().length > 0, 5_000, 'the fallback logged');
      const { reason } = JSON.parse(started()[0]!) as { reason: string };
      assert.match(reason, /^Failed to refresh slots cache\. \(last node: .+\)$/, unreached.logs());
      assert.equal((await unreached.app.inject({ url: '/api/v0/chapters/' })).statusCode, 200, 'counted here');
    } finally {
      await unreached.close();
    }
  });
});

// The sentinel asks for a password of its own (requirepass): the instances give it (REDIS_SENTINEL_PASSWORD), to the
// connection that finds the primary and to the one that hears the end of each failover.
describe('a primary and two replicas behind a Sentinel with a password', { skip }, () => {
  let sentinel: PrivateSentinel;
  const instances: Instance[] = [];
  const password = `sentinel-${crypto.randomUUID()}`;
  const settings = () => ({
    redisMode: 'sentinel',
    redisSentinels: [sentinel.sentinels],
    redisSentinelName: sentinel.name,
    redisSentinelPassword: password,
  });

  before(async () => {
    sentinel = await startRedisSentinel('cds', password);
    await startInstances(instances, {
      REDIS_MODE: 'sentinel',
      REDIS_SENTINELS: sentinel.sentinels,
      REDIS_SENTINEL_NAME: sentinel.name,
      REDIS_SENTINEL_PASSWORD: password,
    });
  });

  after(async () => {
    await stopInstances(instances);
    await sentinel?.stop();
  });

  test('the limit is global, revocations and data changes reach both', async () => {
    await allShared(instances);
    await assertGlobalLimit(instances, 'sentinel-limit');
    await assertRevocationSeen(instances, 'sentinel-revoke');
    await assertDataChangeSeen(instances, 'sentinel-data', settings());
    for (const instance of instances) assert.ok(!instance.output().includes(password), `${instance.base} logged it`);
  });

  test('a wrong or missing sentinel password: counted per instance, said once with the reason, never logged', async () => {
    const wrong = `wrong-${crypto.randomUUID()}`;
    for (const [label, given] of [
      ['wrong', { REDIS_SENTINEL_PASSWORD: wrong }],
      ['missing', {}],
    ] as const) {
      let now = Math.floor(Date.now() / 1000) * 1000 + 5;
      const refused = await buildTestApp({
        env: {
          REDIS_MODE: 'sentinel',
          REDIS_SENTINELS: sentinel.sentinels,
          REDIS_SENTINEL_NAME: sentinel.name,
          ...given,
          REDIS_PREFIX: `refused-${label}:`,
          RATE_LIMIT_PER_SECOND: String(LIMIT),
        },
        sharedDatabase: database,
        captureLogs: true,
        clock: () => now,
      });
      try {
        const started = () => fallbackStarts(refused.logs());
        await until(() => started().length > 0, 10_000, `${label}: the fallback said`);
        now += 1000;
        const burst = await Promise.all(
          Array.from({ length: LIMIT + 1 }, () => refused.app.inject({ url: '/api/v0/chapters/' })),
        );
        assert.deepEqual(burst.map((r) => r.statusCode).sort(), [...Array(LIMIT).fill(200), 429], `${label}: here`);
        assert.match((await refused.app.inject({ url: '/metrics' })).body, /^cds_rate_limit_shared 0$/m);
        // ioredis tries the sentinels again and again; the fallback is said once, with the sentinel's answer.
        assert.equal(started().length, 1, refused.logs());
        assert.match(started()[0]!, label === 'wrong' ? /WRONGPASS/ : /NOAUTH/);
        assert.ok(!refused.logs().includes(wrong) && !refused.logs().includes(password), `${label}: a password logged`);
      } finally {
        await refused.close();
      }
    }
  });

  /**
   * A failover `cause`d here, then: both instances count in Redis again within SHARED_AGAIN_MS of the failover (the
   * sentinel's +switch-master, which ends it once the other replica follows the new primary), each logged the fallback once when it started and once when it ended, and the limit is global
   * again (both on the new primary). `meanwhile` runs between the cause and the promotion.
   */
  async function assertFailover(
    label: string,
    cause: () => Promise<number>,
    meanwhile: () => Promise<void> = async () => {},
  ): Promise<{ old: number; failoverMs: number; sharedAgainMs: number }> {
    const from = instances.map((instance) => instance.output().length);
    const switched = await sentinel.nextSwitch(30_000);
    const startedAt = Date.now();
    const old = await cause();
    await meanwhile();
    const failedOverAt = await switched.heard;
    assert.notEqual(await sentinel.primary(), old);
    for (const [i, instance] of instances.entries()) {
      await until(
        async () => fallbacks(instance, from[i]).at(-1)?.ended === true && (await shared(instance)) === 1,
        SHARED_AGAIN_MS,
        `${instance.base} shared again`,
      ).catch((error: Error) => assert.fail(`${error.message}\n${notes(instance)}`));
    }
    const sharedAgainMs = Date.now() - failedOverAt;
    assert.ok(sharedAgainMs <= SHARED_AGAIN_MS, `shared again ${sharedAgainMs} ms after the failover`);
    instances.forEach((instance, i) => {
      // One fallback, logged once when it started and once when it ended.
      const logged = fallbacks(instance, from[i]);
      assert.deepEqual(
        logged.map((fallback) => fallback.ended),
        [true],
        `${instance.base}: ${JSON.stringify(logged)}`,
      );
    });
    await assertGlobalLimit(instances, `${label}-limit`);
    await assertRevocationSeen(instances, `${label}-revoke`);
    assertNoTopologyErrors(instances);
    return { old, failoverMs: failedOverAt - startedAt, sharedAgainMs };
  }

  test('SENTINEL FAILOVER (the primary keeps running): shared again within 5 s, logged once each way', async (t) => {
    const { old, failoverMs, sharedAgainMs } = await assertFailover('sentinel-failover', () => sentinel.failover());
    t.diagnostic(`${old} demoted, failover ended after ${failoverMs} ms, shared again ${sharedAgainMs} ms later`);
    // The next failover promotes the other replica, which follows the new primary by now.
    await sentinel.replicaInSync();
  });

  test('the primary killed: per instance (metric 0) until the failover, shared within 5 s of it', async (t) => {
    const { old, failoverMs, sharedAgainMs } = await assertFailover(
      'sentinel-kill',
      () => sentinel.killPrimary(),
      async () => {
        for (const instance of instances) {
          await until(async () => (await shared(instance)) === 0, 5_000, `${instance.base} reports the fallback`);
        }
      },
    );
    t.diagnostic(`${old} killed, failover ended after ${failoverMs} ms, shared again ${sharedAgainMs} ms later`);
  });
});
