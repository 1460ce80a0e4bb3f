// The embedded database runs beside the event loop (a worker thread, src/db/embedded/pglite-host.ts): while a slow
// statement runs on the service's own database handle, a cached response and /livez still answer, and they
// answer first. On the PostgreSQL engine the same holds through the pool's other connections, so the test runs
// on both. What completes first is asserted, never how long anything took.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { FastifyInstance } from 'fastify';
import { embeddedWorker, openDatabase, type Database } from '../src/db/index.ts';
import type { RestartOptions } from '../src/db/embedded-health.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { chapter } from './factories.ts';
import { EMBEDDED, seedDataDir, serverUrl } from './helpers.ts';

let t: TestApp;

before(async () => {
  t = await buildTestApp();
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
  // The write moved the data version (it records its change): heard now, not at the app's next poll mid-test.
  await t.app.shared.watcher.refresh();
});

after(() => t.close());

/** Lets everything already queued on the event loop (a statement being sent, for one) run first. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a slow statement on the database does not hold up a cached response or /livez', async () => {
  const url = '/api/v0/chapters/london';
  assert.equal((await t.app.inject({ method: 'GET', url })).headers['x-cache'], 'MISS');

  const done: string[] = [];
  // pg_sleep holds PGlite's one session (and, on the main thread, would hold the event loop) for 0.5 s: the two
  // requests take milliseconds. (PGlite's pg_sleep spins: each second of it is a second of CPU.)
  const slow = sql<{ slept: string }>`select pg_sleep(0.5)::text as slept`.execute(t.database.db).then((result) => {
    done.push('slow statement');
    return result;
  });
  await turn();

  const cached = await t.app.inject({ method: 'GET', url });
  done.push('cached response');
  const live = await t.app.inject({ method: 'GET', url: '/livez' });
  done.push('/livez');

  assert.equal(cached.statusCode, 200);
  assert.equal(cached.headers['x-cache'], 'HIT');
  assert.equal(cached.json().name, 'OWASP London');
  assert.equal(live.statusCode, 200);
  assert.deepEqual((await slow).rows, [{ slept: '' }]);
  assert.deepEqual(done, ['cached response', '/livez', 'slow statement']);
});

test('a request that comes while a transaction is open runs after it, outside it', async () => {
  const url = '/api/v0/chapters/paris';
  let request: Promise<{ statusCode: number }> | undefined;
  const rolledBack = new Error('roll back');
  await assert.rejects(
    t.database.db.transaction().execute(async (tx) => {
      await chapter(tx, { key: 'paris', name: 'OWASP Paris' });
      request = t.app.inject({ method: 'GET', url });
      await turn();
      throw rolledBack;
    }),
    (error) => error === rolledBack,
  );
  const res = await request!;
  assert.equal(res.statusCode, 404, 'the request did not see the rolled-back row');
  await chapter(t.database.db, { key: 'paris', name: 'OWASP Paris' });
  assert.equal((await t.app.inject({ method: 'GET', url })).json().name, 'OWASP Paris');
});

/** The restart backoff's clock: time moves only when the test advances it. */
function manualClock() {
  let now = 0;
  const timers = new Set<{ run: () => void; at: number }>();
  return {
    clock: {
      now: () => now,
      setTimeout(run: () => void, ms: number) {
        const timer = { run, at: now + ms };
        timers.add(timer);
        return timer;
      },
      clearTimeout: (timer: unknown) => void timers.delete(timer as { run: () => void; at: number }),
    },
    /** Moves the time on and runs the timers that came due. */
    advance(ms: number) {
      now += ms;
      for (const timer of [...timers].filter((t) => t.at <= now)) {
        timers.delete(timer);
        timer.run();
      }
    },
    get pending() {
      return timers.size;
    },
  };
}

const embeddedSkip = {
  skip: serverUrl ? "about the embedded database's worker thread (this pass runs on PostgreSQL)" : false,
};

test(
  "a crashed worker on a data folder: 503 meanwhile, then it restarts by itself with the committed data; the pool's idle client of a dead worker is dropped",
  embeddedSkip,
  async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-pglite-crash-'));
    await seedDataDir(dir);
    const dataDir = path.join(dir, 'pglite');
    const time = manualClock();
    const lines: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }),
    );
    try {
      // Its own shared_buffers, which a restarted worker must keep (checked after the first restart).
      const database = await openDatabase({ dataDir, sharedBuffersMb: 9, restart: { clock: time.clock } });
      await chapter(database.db, { key: 'paris', name: 'OWASP Paris' });
      await chapter(database.db, { key: 'london', name: 'OWASP London' });
      const app = await buildApp({
        config: loadConfig({
          LOG_LEVEL: 'warn',
          REST_AUTH: 'optional',
          EDGE_MAX_AGE_S: '0',
          RATE_LIMIT_PER_SECOND: '1000000',
        }),
        database,
        logger,
      });
      let appClosed: Promise<void> | undefined;
      const closeApp = () => (appClosed ??= app.close());
      try {
        assert.equal((await app.inject({ method: 'GET', url: '/api/v0/chapters/london' })).headers['x-cache'], 'MISS');
        // Committed just before the crash, with the pool's client still bound to the worker that dies (an update: a
        // change the API does not show, so the data version stays and the cached London stays cached).
        await sql`UPDATE chapters SET meetup_group = 'paris-owasp' WHERE key = 'paris'`.execute(database.db);
        const embedded = database.embedded!;
        const first = embeddedWorker(database)!;
        const crashed = once(embedded, 'crashed');
        await first.crash();
        const [{ restartInMs }] = await crashed;
        assert.equal(restartInMs, 500, "the first restart comes after the backoff's first step");
        assert.equal(embedded.state, 'restarting');

        const uncached = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
        assert.equal(uncached.statusCode, 503, uncached.body);
        assert.deepEqual(uncached.json(), {
          message: 'Service unavailable',
          error_id: uncached.headers['x-request-id'],
        });
        const cached = await app.inject({ method: 'GET', url: '/api/v0/chapters/london' });
        assert.equal(cached.statusCode, 200);
        assert.equal(cached.headers['x-cache'], 'HIT');
        assert.equal(
          (await app.inject({ method: 'GET', url: '/livez' })).statusCode,
          200,
          'a worker being restarted is not a reason to restart the process',
        );
        assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);

        // Nothing restarts before its time; at 500 ms a new worker opens the same folder.
        time.advance(499);
        assert.equal(embedded.state, 'restarting');
        const restarted = once(embedded, 'restarted');
        time.advance(1);
        assert.deepEqual(await restarted, [{ attempt: 1 }]);
        assert.equal(embedded.state, 'running');
        assert.notEqual(embeddedWorker(database), first);
        const setting = sql<{ value: string }>`select current_setting('shared_buffers') as value`;
        assert.deepEqual((await setting.execute(database.db)).rows, [{ value: '9MB' }]);

        const again = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
        assert.equal(again.statusCode, 200, again.body);
        assert.deepEqual(
          again
            .json()
            .items.map((c: { key: string }) => c.key)
            .sort(),
          ['london', 'paris'],
        );
        // The write committed just before the crash is there.
        const { rows } = await sql<{ meetup_group: string }>`
          SELECT meetup_group FROM chapters WHERE key = 'paris'`.execute(database.db);
        assert.equal(rows[0]?.meetup_group, 'paris-owasp');
        assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
        const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
        assert.match(metrics, /^cds_embedded_database_restarts_total 1$/m);
        assert.match(metrics, /^cds_embedded_database_up 1$/m);

        const log = lines.join('');
        assert.match(
          log,
          /"level":50,.*"reason":"its worker exited with code 1".*"restartInMs":500.*"msg":"the embedded database stopped: restarting it"/,
        );
        assert.match(log, /"level":40,.*"attempt":1.*"msg":"the embedded database restarted"/);

        // A second crash soon after: the backoff doubled (it resets only after a worker ran for a minute). No query
        // comes while it is down, so the pool's idle client is still bound to the dead worker: it must be dropped,
        // and the first request after the restart answers 200, not 503.
        let crashedAgain = once(embedded, 'crashed');
        await embeddedWorker(database)!.crash();
        assert.deepEqual(await crashedAgain, [{ reason: 'its worker exited with code 1', restartInMs: 1000 }]);
        const restartedAgain = once(embedded, 'restarted');
        time.advance(1000);
        await restartedAgain;
        const detail = await app.inject({ method: 'GET', url: '/api/v0/chapters/paris' });
        assert.equal(detail.statusCode, 200, detail.body);
        assert.equal(detail.json().name, 'OWASP Paris');

        // A third, without the app: its background polling (data version, revocations) could use up the pool's stale
        // client during the restart and hide the case where no query at all comes between the crash and the restart.
        // The idle client of the dead worker is dropped: the first query after the restart succeeds.
        await closeApp();
        assert.deepEqual((await sql<{ x: number }>`select 1 as x`.execute(database.db)).rows, [{ x: 1 }]);
        crashedAgain = once(embedded, 'crashed');
        await embeddedWorker(database)!.crash();
        assert.deepEqual(await crashedAgain, [{ reason: 'its worker exited with code 1', restartInMs: 2000 }]);
        const restartedThird = once(embedded, 'restarted');
        time.advance(2000);
        await restartedThird;
        assert.deepEqual((await sql<{ x: number }>`select 2 as x`.execute(database.db)).rows, [{ x: 2 }]);

        // A fourth: 4 s, and it is still pending when the database closes.
        crashedAgain = once(embedded, 'crashed');
        await embeddedWorker(database)!.crash();
        assert.deepEqual(await crashedAgain, [{ reason: 'its worker exited with code 1', restartInMs: 4000 }]);
        assert.equal(time.pending, 1);
      } finally {
        await closeApp();
        // Closing while a restart is due cancels it and releases the lock.
        await database.close();
      }
      assert.equal(time.pending, 0);

      // The lock is released and the next open recovers the folder: what was committed is there.
      const reopened = await openDatabase({ ...EMBEDDED, dataDir });
      try {
        assert.deepEqual(
          (await reopened.db.selectFrom('chapters').select('key').orderBy('key').execute()).map((r) => r.key),
          ['london', 'paris'],
        );
      } finally {
        await reopened.close();
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a crashed in-memory database is not restarted (it would come back empty): /livez answers 503',
  embeddedSkip,
  async () => {
    const own = await buildTestApp({ captureLogs: true });
    try {
      const embedded = own.database.embedded!;
      const crashed = once(embedded, 'crashed');
      await embeddedWorker(own.database)!.crash();
      assert.deepEqual(await crashed, [{ reason: 'its worker exited with code 1' }]);
      assert.equal(embedded.state, 'failed');
      const live = await own.app.inject({ method: 'GET', url: '/livez' });
      assert.equal(live.statusCode, 503);
      assert.deepEqual(live.json(), { status: 'failed', embedded_database: 'failed' });
      assert.equal((await own.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
      assert.equal((await own.app.inject({ method: 'GET', url: '/api/v0/chapters/' })).statusCode, 503);
      assert.match(
        own.logs(),
        /"level":50,.*"msg":"the embedded database stopped and cannot be restarted \(in memory\): \/livez answers 503"/,
      );
    } finally {
      await own.close();
    }
  },
);

/**
 * An embedded database on a data folder of its own (seeded, with London), restarted on `time`'s clock with `restart`'s
 * other options, and an app on it: `run` gets them; all of it is closed and removed afterwards.
 */
async function onDataFolder(
  prefix: string,
  restart: Omit<RestartOptions, 'clock'>,
  run: (ctx: {
    database: Database;
    app: FastifyInstance;
    dataDir: string;
    time: ReturnType<typeof manualClock>;
  }) => Promise<void>,
): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await seedDataDir(dir);
  const dataDir = path.join(dir, 'pglite');
  const time = manualClock();
  try {
    const database = await openDatabase({ ...EMBEDDED, dataDir, restart: { clock: time.clock, ...restart } });
    await chapter(database.db, { key: 'london', name: 'OWASP London' });
    const app = await buildApp({
      config: loadConfig({
        LOG_LEVEL: 'silent',
        REST_AUTH: 'optional',
        EDGE_MAX_AGE_S: '0',
        RATE_LIMIT_PER_SECOND: '1000000',
      }),
      database,
    });
    try {
      await run({ database, app, dataDir, time });
    } finally {
      await app.close();
      await database.close();
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

test(
  'a restart that cannot open the folder is retried with a longer delay; after too many /livez is 503 until one succeeds',
  embeddedSkip,
  () =>
    onDataFolder('cds-pglite-restart-', { maxFailedStarts: 2 }, async ({ database, app, dataDir, time }) => {
      const embedded = database.embedded!;
      const crashed = once(embedded, 'crashed');
      await embeddedWorker(database)!.crash();
      await crashed;
      // The folder is out of the way and another stands in its place, of a PostgreSQL version this one cannot
      // open: the new worker fails at once. (A file in its place fails too, but only after an initdb's worth of
      // work, about 2 s of CPU per attempt.)
      await fs.rename(dataDir, `${dataDir}.aside`);
      await fs.mkdir(dataDir);
      await fs.writeFile(path.join(dataDir, 'PG_VERSION'), '99\n');

      let failed = once(embedded, 'restart-failed');
      time.advance(500);
      const [first] = await failed;
      assert.equal(first.attempt, 1);
      assert.equal(first.restartInMs, 1000);
      assert.equal(first.state, 'restarting');
      assert.equal((await app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);

      failed = once(embedded, 'restart-failed');
      time.advance(1000);
      const [second] = await failed;
      assert.deepEqual([second.attempt, second.restartInMs, second.state], [2, 2000, 'failed']);
      assert.equal((await app.inject({ method: 'GET', url: '/livez' })).statusCode, 503);
      assert.equal((await app.inject({ method: 'GET', url: '/api/v0/chapters/' })).statusCode, 503);

      await fs.rm(dataDir, { recursive: true });
      await fs.rename(`${dataDir}.aside`, dataDir);
      const restarted = once(embedded, 'restarted');
      time.advance(2000);
      assert.deepEqual(await restarted, [{ attempt: 3 }]);
      assert.equal((await app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
      const list = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
      assert.equal(list.statusCode, 200, list.body);
      assert.deepEqual(
        list.json().items.map((c: { key: string }) => c.key),
        ['london'],
      );
    }),
);

test(
  'an exception inside PGlite in the middle of a query (a stack overflow) fails that query at once and restarts the database, instead of spinning forever',
  embeddedSkip,
  () =>
    onDataFolder('cds-pglite-trap-', {}, async ({ database, app, time }) => {
      // Each level of this recursion takes more of the worker thread's native stack than of PostgreSQL's own
      // (max_stack_depth): the thread's stack overflows first, a RangeError out of the backend's step, not the ERROR
      // PostgreSQL would raise. PGlite swallows it and runs the same step again, forever (PGlite #1058): without
      // the guard in pglite-worker.ts this statement never answers and the thread spins at 100 % of a core.
      await sql`CREATE FUNCTION deep(n int) RETURNS int LANGUAGE sql
          AS 'SELECT CASE WHEN n = 0 THEN 0 ELSE deep(n - 1) + 1 END'`.execute(database.db);
      assert.deepEqual((await sql<{ v: number }>`SELECT deep(100) AS v`.execute(database.db)).rows, [{ v: 100 }]);
      const crashed = once(database.embedded!, 'crashed');
      await assert.rejects(sql`SELECT deep(100000)`.execute(database.db), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'ECONNRESET');
        assert.match(error.message, /the embedded database failed in a query: Maximum call stack size exceeded/);
        return true;
      });
      await crashed;
      const meanwhile = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
      assert.equal(meanwhile.statusCode, 503, meanwhile.body);

      const restarted = once(database.embedded!, 'restarted');
      time.advance(500);
      await restarted;
      const again = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(
        again.json().items.map((c: { key: string }) => c.key),
        ['london'],
      );
    }),
);
