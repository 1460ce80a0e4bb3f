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
import { dataChangesKey } from '../../changes/announce.ts';
import { BUNDLED_DATA_DIR } from '../import.ts';
import { startSyncScheduler, type SyncJob } from './scheduler.ts';

const config = loadConfig({});
const log = pino({ level: 'silent' });

let database: TestDatabase;
before(async () => {
  database = await createTestDb();
});
after(() => database.drop());

const forgetLastRun = () => sql`DELETE FROM sync_state`.execute(database.db);

function countingJob(ms: number) {
  const job = {
    runs: 0,
    name: 'counting',
    async run({ signal }: { signal: AbortSignal }) {
      job.runs++;
      await sleep(ms, undefined, { signal }).catch(() => {});
      return { changed: false, dataVersion: 0, summary: 'counted' };
    },
  };
  return job;
}

test('without SYNC_INTERVAL, or with nothing to sync, there is no scheduler', () => {
  assert.equal(startSyncScheduler({ database, config, log }), undefined);
  const settings = { intervalMs: 60_000, githubOrgs: [], owaspFrom: undefined };
  assert.equal(startSyncScheduler({ database, config, log, settings }), undefined);
});

test('runs every interval, and stops cleanly, waiting for the run in progress', async () => {
  await forgetLastRun();
  const job = countingJob(20);
  const settings = { intervalMs: 150, githubOrgs: [], owaspFrom: undefined };
  const scheduler = startSyncScheduler({ database, config, log, settings, jobs: [job], firstTickMs: 0 })!;
  const deadline = Date.now() + 5_000;
  while (job.runs < 3 && Date.now() < deadline) await sleep(20);
  assert.ok(job.runs >= 3, `${job.runs} runs`);

  const slow = countingJob(10_000);
  const second = startSyncScheduler({
    database,
    config,
    log,
    settings: { ...settings, intervalMs: 60_000 },
    jobs: [slow],
    firstTickMs: 60_000,
  })!;
  await scheduler.stop();
  const runs = job.runs;
  await forgetLastRun();
  const ticking = second.tick();
  while (slow.runs === 0) await sleep(5);
  const started = Date.now();
  await second.stop();
  assert.equal(await ticking, 'ran');
  assert.ok(Date.now() - started < 2_000, 'stop aborts the run in progress');
  await sleep(400);
  assert.equal(job.runs, runs, 'no run after stop');
  assert.equal(await scheduler.tick(), 'stopped');
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
      const shared: SyncJob & { runs: number } = countingJob(300);
      const a = startSyncScheduler({ database, config, log, settings, jobs: [shared], firstTickMs: 60_000 })!;
      const b = startSyncScheduler({ database: other, config, log, settings, jobs: [shared], firstTickMs: 60_000 })!;
      const outcomes = await Promise.all([a.tick(), b.tick()]);
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
