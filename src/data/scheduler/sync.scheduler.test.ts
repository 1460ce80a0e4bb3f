// The sync scheduler: ticks, clean stop, the default jobs from the settings, and (on PostgreSQL) one
// runner per tick across two instances sharing the database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pino from 'pino';
import { createTestDb, serverUrl, type TestDatabase } from '../../../test/helpers.ts';
import { loadConfig } from '../../config.ts';
import { openDatabase } from '../../db/index.ts';
import { dataChangesKey } from '../../announcements/announce.ts';
import { BUNDLED_DATA_DIR } from '../import/dataset.import.ts';
import { SCHEDULER_LEASE, startSyncScheduler, type SyncJob } from './sync.scheduler.ts';

const config = loadConfig({});
const log = pino({ level: 'silent' });

let database: TestDatabase;
before(async () => {
  database = await createTestDb();
});
after(() => database.drop());

const forgetLastRun = () => sql`DELETE FROM sync_state`.execute(database.db);

/** A job that counts its runs; each lasts `ms`, or until the scheduler aborts it or the test calls finish(). */
function countingJob(ms: number) {
  let started = () => {};
  const finished = new AbortController();
  const job = {
    finish: () => finished.abort(),
    runs: 0,
    name: 'counting',
    /** Settles when the next run starts. */
    nextStart: () => new Promise<void>((resolve) => (started = resolve)),
    async run({ signal }: { signal: AbortSignal }) {
      job.runs++;
      started();
      await sleep(ms, undefined, { signal: AbortSignal.any([signal, finished.signal]) }).catch(() => {});
      return { changed: false, dataVersion: 0, summary: 'counted' };
    },
  };
  return job;
}

/** The scheduler's timer, fired by the test: the delays asked for, in order, and the one pending. */
function handTimer() {
  const timer = {
    delays: [] as number[],
    pending: undefined as (() => void) | undefined,
    after: (ms: number, task: () => void) => {
      timer.delays.push(ms);
      timer.pending = task;
      return () => {
        if (timer.pending === task) timer.pending = undefined;
      };
    },
    /** Fires the pending timer and waits until the tick it started has scheduled the next one (or stopped). */
    async fire() {
      const task = timer.pending;
      assert.ok(task, 'a timer is pending');
      timer.pending = undefined;
      const asked = timer.delays.length;
      task();
      while (timer.delays.length === asked && !timer.pending) await new Promise((r) => setImmediate(r));
    },
  };
  return timer;
}

test('without SYNC_INTERVAL, or with nothing to sync, there is no scheduler', () => {
  assert.equal(startSyncScheduler({ database, config, log }), undefined);
  const settings = { intervalMs: 60_000, githubOrgs: [], owaspFrom: undefined };
  assert.equal(startSyncScheduler({ database, config, log, settings }), undefined);
});

test('ticks after the first delay, then every interval after each tick; stop cancels the timer', async () => {
  const job = countingJob(0);
  const timer = handTimer();
  const settings = { intervalMs: 3_600_000, githubOrgs: [], owaspFrom: undefined };
  const scheduler = startSyncScheduler({
    database,
    config,
    log,
    settings,
    jobs: [job],
    firstTickMs: 5_000,
    after: timer.after,
  })!;
  assert.deepEqual(timer.delays, [5_000]);
  assert.equal(job.runs, 0, 'nothing before the first tick');
  for (let run = 1; run <= 3; run++) {
    // (The last run is recorded on the database's clock: forgotten, the hour is over without waiting for it.)
    await forgetLastRun();
    await timer.fire();
    assert.equal(job.runs, run);
  }
  // A tick that is not due (the last run just began) still schedules the next one.
  await timer.fire();
  assert.equal(job.runs, 3, 'not due');
  assert.deepEqual(timer.delays, [5_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000]);

  await scheduler.stop();
  assert.equal(timer.pending, undefined, 'stop cancels the pending timer');
  assert.equal(await scheduler.tick(), 'stopped');
  assert.equal(job.runs, 3, 'no run after stop');
});

test('stop aborts the run in progress and waits for it', async () => {
  await forgetLastRun();
  const slow = countingJob(3_600_000);
  const timer = handTimer();
  const settings = { intervalMs: 60_000, githubOrgs: [], owaspFrom: undefined };
  const scheduler = startSyncScheduler({ database, config, log, settings, jobs: [slow], after: timer.after })!;
  const started = slow.nextStart();
  const ticking = scheduler.tick();
  await started;
  assert.equal(await scheduler.tick(), 'busy', 'one run at a time');
  // Resolves only once the run has ended: its hour-long wait was aborted.
  await scheduler.stop();
  assert.equal(await ticking, 'ran');
  assert.equal(slow.runs, 1);
  assert.equal(timer.pending, undefined);
});

test('the default jobs sync what the settings name, and announce the data change', async () => {
  const prefix = `cds-sync-test-${crypto.randomBytes(4).toString('hex')}:`;
  const redisUrl = process.env.REDIS_URL;
  const client = redisUrl ? new Redis(redisUrl) : undefined;
  try {
    const settings = { intervalMs: 3_600_000, githubOrgs: [], owaspFrom: path.join(BUNDLED_DATA_DIR, 'owasp') };
    const scheduler = startSyncScheduler({
      database,
      config: { ...config, redisUrl, redisPrefix: prefix },
      log,
      settings,
      firstTickMs: 3_600_000,
    })!;
    await forgetLastRun();
    assert.equal(await scheduler.tick(), 'ran');
    assert.equal(await scheduler.tick(), 'not due');
    await scheduler.stop();
    const { count } = await database.db
      .selectFrom('chapters')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count), 608);
    // One changing run, one announcement: the shared change counter moved once.
    if (client) assert.equal(await client.get(dataChangesKey(prefix)), '1');
  } finally {
    if (client) await client.del(dataChangesKey(prefix));
    client?.disconnect();
  }
});

test(
  'two instances on one PostgreSQL database: one runs a given tick',
  { skip: !serverUrl && 'needs DATABASE_URL' },
  async () => {
    const other = await openDatabase({ databaseUrl: database.url, poolSize: 3 });
    try {
      await forgetLastRun();
      const settings = { intervalMs: 60_000, githubOrgs: [], owaspFrom: undefined };
      // The run lasts until the test has seen the other instance's answer.
      const shared: SyncJob & ReturnType<typeof countingJob> = countingJob(3_600_000);
      const a = startSyncScheduler({ database, config, log, settings, jobs: [shared], firstTickMs: 60_000 })!;
      const b = startSyncScheduler({ database: other, config, log, settings, jobs: [shared], firstTickMs: 60_000 })!;
      const ticks = [a.tick(), b.tick()];
      assert.equal(await Promise.race(ticks), 'busy', 'the other instance holds the lock');
      shared.finish();
      const outcomes = await Promise.all(ticks);
      assert.deepEqual(outcomes.sort(), ['busy', 'ran']);
      assert.equal(await b.tick(), 'not due', 'the tick already ran');
      assert.equal(await a.tick(), 'not due');
      assert.equal(shared.runs, 1);
      await Promise.all([a.stop(), b.stop()]);
    } finally {
      await other.close();
    }
  },
);

test(
  'the lease: one left by a dead instance is taken once it has run out; one renewed while a run lasts keeps others out; a lost one stops the run',
  { skip: !serverUrl && 'needs DATABASE_URL' },
  async () => {
    const other = await openDatabase({ databaseUrl: database.url, poolSize: 3 });
    const leaseOf = async () =>
      (await sql<{ value: string }>`SELECT value FROM sync_state WHERE key = ${SCHEDULER_LEASE}`.execute(database.db))
        .rows[0]?.value;
    const leave = (holder: string, seconds: number) =>
      sql`INSERT INTO sync_state (key, value) VALUES (${SCHEDULER_LEASE},
        json_build_object('holder', ${holder}::text, 'until', now() + make_interval(secs => ${seconds}))::text)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`.execute(database.db);
    const settings = { intervalMs: 60_000, githubOrgs: [], owaspFrom: undefined };
    try {
      await forgetLastRun();
      const job = countingJob(0);
      const a = startSyncScheduler({ database, config, log, settings, jobs: [job], firstTickMs: 60_000 })!;
      // A lease left by an instance that died: busy while it runs, taken once it has run out.
      await leave('dead instance', 30);
      assert.equal(await a.tick(), 'busy');
      await leave('dead instance', -1);
      assert.equal(await a.tick(), 'ran');
      assert.equal(job.runs, 1);
      assert.equal(await leaseOf(), undefined);
      await a.stop();

      // A run longer than its lease (600 ms here) renews it: the other instance stays out.
      await forgetLastRun();
      const long = countingJob(3_600_000);
      const b = startSyncScheduler({ database, config, log, settings, jobs: [long], leaseMs: 600 })!;
      const c = startSyncScheduler({ database: other, config, log, settings, jobs: [long], leaseMs: 600 })!;
      const started = long.nextStart();
      const running = b.tick();
      await started;
      const until = async () => (JSON.parse((await leaseOf())!) as { until: string }).until;
      const first = await until();
      while ((await until()) === first) await sleep(20);
      // Past the first term, on the database's clock.
      while (
        !(await sql<{ past: boolean }>`SELECT now() > ${first}::timestamptz AS past`.execute(database.db)).rows[0]!.past
      )
        await sleep(20);
      assert.equal(await c.tick(), 'busy');

      // Taken by another (the runner stalled past its term): the run stops at its next renewal.
      await leave('another instance', 60);
      assert.equal(await running, 'ran');
      assert.equal(long.runs, 1, 'stopped by the lost lease, not finished');
      assert.match((await leaseOf())!, /another instance/, 'the other holder keeps it');
      await Promise.all([b.stop(), c.stop()]);
    } finally {
      await sql`DELETE FROM sync_state`.execute(database.db);
      await other.close();
    }
  },
);
