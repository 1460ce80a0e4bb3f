// Test tier: system (starts a PostgreSQL, PgBouncer and the server of its own): `npm run test:system`, CI.
// The service behind PgBouncer in transaction mode (issue 29, item 1): start, migrate, serve, import, sync, the
// scheduler on two instances, `cds` commands and the list timeout, with DATABASE_POOL_MODE=transaction. It brings its
// own servers (a private PostgreSQL, test/postgres-server.ts, and Debian's pgbouncer, test/pgbouncer-server.ts), so
// its outcome does not depend on the engine of the pass; it runs in one pass only, CI's PostgreSQL pass (faults.test.ts,
// which also brings its own servers, runs in both): the other tests of that pass already need the server binaries,
// and a second run would cost the PGlite pass half a minute of its two cores to test the same thing again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { MIGRATION_LOCK_ID } from '../src/db/migration-lock.ts';
import { BUNDLED_DATA_DIR } from '../src/data/import/dataset.import.ts';
import { syncOwasp } from '../src/data/sync/owasp/owasp.sync.ts';
import { owaspSummary } from '../src/data/sync/sync.summary.ts';
import { SCHEDULER_LEASE, startSyncScheduler, type SyncJob } from '../src/data/scheduler/sync.scheduler.ts';
import { CLI_ARGS, childEnv, exited, freePort, ROOT, runCli, startServer, waitFor200 } from './process.ts';
import { startPrivatePostgres, type PrivatePostgres } from './postgres-server.ts';
import { startPgbouncer, type PrivatePgbouncer } from './pgbouncer-server.ts';

const skip = process.env.DATABASE_URL
  ? false
  : "runs in CI's PostgreSQL pass only (it brings its own PostgreSQL and PgBouncer; see the comment at the top)";

let server: PrivatePostgres;
let bouncer: PrivatePgbouncer;

before(async () => {
  if (skip) return;
  server = await startPrivatePostgres();
  bouncer = await startPgbouncer(server.url);
});

after(async () => {
  await bouncer?.destroy();
  await server?.destroy();
});

/** The address of `database` on the PostgreSQL server itself, past the pooler. */
function direct(database: string): string {
  const url = new URL(server.url);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** What a service or a `cds` command behind the pooler is given. */
const pooled = (database: string) => ({ DATABASE_URL: bouncer.url(database), DATABASE_POOL_MODE: 'transaction' });

async function query<R extends pg.QueryResultRow>(database: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: direct(database) });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const createDatabase = (name: string) => query('postgres', `CREATE DATABASE "${name}"`);

/** Advisory locks held or awaited anywhere on the server (pg_locks covers every database). */
const advisoryLocks = () =>
  query<{ datname: string; objid: number; pid: number; granted: boolean }>(
    'postgres',
    `SELECT d.datname, l.objid, l.pid, l.granted FROM pg_locks l LEFT JOIN pg_database d ON d.oid = l.database
     WHERE l.locktype = 'advisory'`,
  );

/** Polls `condition` until it holds (at most `ms`). */
async function until(condition: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Two clients of the pooler running short statements on `database` until stopped. */
function busy(database: string): { stop(): Promise<void> } {
  let stopped = false;
  const clients = Array.from({ length: 2 }, async () => {
    const client = new pg.Client({ connectionString: bouncer.url(database) });
    await client.connect();
    try {
      while (!stopped) await client.query('SELECT pg_sleep(0.005)');
    } finally {
      await client.end();
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(clients);
    },
  };
}

test(
  'the service and cds through PgBouncer in transaction mode: migrate, keys, start with the import, serve, sync; lists and details past their statement timeouts are cancelled (503); the pooler stopped and back',
  { skip, timeout: 180_000 },
  async () => {
    const name = 'cds_service';
    await createDatabase(name);
    // Without the setting the start-up parameters are refused: why DATABASE_POOL_MODE exists.
    const refused = await runCli(['migrate'], { DATABASE_URL: bouncer.url(name) });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /unsupported startup parameter/);
    assert.match(refused.stderr, /set DATABASE_POOL_MODE=transaction/, 'the refusal names the setting (issue 45)');

    const migrated = await runCli(['migrate'], pooled(name));
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stderr, /applied: 0001_data_model/);
    const user = await runCli(['users', 'create', 'alice', '--key', 'pooled'], pooled(name));
    assert.equal(user.code, 0, user.stderr);
    const key = user.stdout.trim();
    assert.match(key, /\S{20,}/);

    const port = await freePort();
    const service = startServer({
      ...pooled(name),
      PORT: String(port),
      AUTO_IMPORT: 'true',
      RESPONSE_CACHE: 'false',
      RATE_LIMIT_PER_SECOND: '1000000',
      LIST_STATEMENT_TIMEOUT_MS: '500',
      DATABASE_STATEMENT_TIMEOUT_MS: '1000',
    });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor200(`${base}/readyz`, 120_000);
      const get = (url: string) => fetch(`${base}${url}`, { headers: { 'x-api-key': key } });
      const list = await get('/api/v0/chapters/?page_size=5');
      assert.equal(list.status, 200);
      const items = ((await list.json()) as { items: { key: string }[] }).items;
      assert.equal(items.length, 5, 'the bundled dataset was imported through the pooler');
      const detail = `/api/v0/chapters/${items[0]!.key}`;
      assert.equal((await get(detail)).status, 200);
      assert.equal((await get('/status/')).status, 200);

      // Another session holds the table: the list runs past LIST_STATEMENT_TIMEOUT_MS, the detail past
      // DATABASE_STATEMENT_TIMEOUT_MS; both are cancelled by the server (SET LOCAL inside their transactions).
      const locker = new pg.Client({ connectionString: direct(name) });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query('lock table chapters in access exclusive mode');
        // Sooner than the client's own limit (the statement timeout + 2 s), which would also answer 503.
        for (const [url, timeoutMs] of [
          ['/api/v0/chapters/?page_size=5', 500],
          [detail, 1_000],
        ] as const) {
          const started = Date.now();
          const res = await get(url);
          assert.equal(res.status, 503, `${url}: ${await res.text()}`);
          assert.equal(res.headers.get('retry-after'), '5');
          assert.ok(Date.now() - started < timeoutMs + 1_500, `${url} waited ${Date.now() - started} ms`);
        }
        await locker.query('rollback');
      } finally {
        await locker.end();
      }
      assert.equal((await get('/api/v0/chapters/?page_size=5')).status, 200);
      assert.equal((await get(detail)).status, 200);
      const status = await runCli(['status', '--json'], pooled(name));
      assert.equal(status.code, 0, status.stderr);
      const sync = await runCli(
        ['sync', 'owasp', '--from', path.join(BUNDLED_DATA_DIR, 'owasp'), '--json'],
        pooled(name),
      );
      assert.equal(sync.code, 0, sync.stderr);

      // The pooler stops: 503 (never a dropped connection or a crash), /readyz says so; back when it is.
      await bouncer.stop();
      assert.equal((await get(detail)).status, 503);
      assert.equal((await fetch(`${base}/readyz`)).status, 503);
      await bouncer.start();
      await waitFor200(`${base}/readyz`, 10_000);
      assert.equal((await get(detail)).status, 200);
      assert.equal(service.exitCode, null, 'the service kept running');
    } finally {
      service.kill('SIGTERM');
      assert.equal(await exited(service), 0, service.output());
    }
    assert.doesNotMatch(service.output(), /unsupported startup parameter|"level":50/, service.output());
    assert.deepEqual(await advisoryLocks(), []);
  },
);

test(
  'a server started behind PgBouncer without DATABASE_POOL_MODE stops at once, naming DATABASE_POOL_MODE=transaction',
  { skip, timeout: 60_000 },
  async () => {
    const name = 'cds_unpooled';
    await createDatabase(name);
    const service = startServer({ DATABASE_URL: bouncer.url(name), PORT: String(await freePort()) });
    assert.equal(await exited(service), 1, service.output());
    assert.match(service.output(), /unsupported startup parameter/);
    assert.match(service.output(), /set DATABASE_POOL_MODE=transaction/);
  },
);

test(
  'the scheduler on two instances through PgBouncer: one runs each tick, the other is told why not; no lock or lease is left',
  { skip, timeout: 120_000 },
  async () => {
    const name = 'cds_scheduler';
    await createDatabase(name);
    const open = () =>
      openDatabase({
        databaseUrl: bouncer.url(name),
        poolMode: 'transaction',
        statementTimeoutMs: 10_000,
        poolSize: 3,
      });
    const instances: Database[] = [await open(), await open()];
    const [a, b] = instances as [Database, Database];
    try {
      await migrateToLatest(a.db);
      const lines: { tick?: string; msg: string }[] = [];
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const ran: string[] = [];
      let gate: Promise<void> | undefined;
      let entered = () => {};
      /** The website sync of the bundled files; while `gate` is set, its run waits for it before syncing. */
      const jobs = (instance: string): SyncJob[] => [
        {
          name: 'owasp',
          async run({ db, signal }) {
            ran.push(instance);
            entered();
            await gate;
            const report = await syncOwasp(db, { from: path.join(BUNDLED_DATA_DIR, 'owasp'), signal });
            return { changed: report.changed, dataVersion: report.dataVersion, summary: owaspSummary(report) };
          },
        },
      ];
      const settings = { intervalMs: 60_000, githubOrgs: [], owaspFrom: undefined };
      const config = loadConfig({});
      const common = { config, log, settings, firstTickMs: 3_600_000 };
      const first = startSyncScheduler({ ...common, database: a, jobs: jobs('a') })!;
      const second = startSyncScheduler({ ...common, database: b, jobs: jobs('b') })!;
      const lease = async () =>
        (await sql<{ value: string }>`SELECT value FROM sync_state WHERE key = ${SCHEDULER_LEASE}`.execute(a.db))
          .rows[0]?.value;

      // A run in progress: the other instance's tick is busy; the lease is a row, no session holds a lock.
      let release = () => {};
      gate = new Promise((resolve) => (release = resolve));
      const started = new Promise<void>((resolve) => (entered = resolve));
      const running = first.tick();
      await started;
      assert.equal(await second.tick(), 'busy');
      assert.match((await lease()) ?? '', /"holder"/);
      assert.deepEqual(await advisoryLocks(), []);
      release();
      gate = undefined;
      assert.equal(await running, 'ran');
      assert.equal(await lease(), undefined, 'released at the end of the run');

      // Four more intervals (the last run moved an hour back: the database's clock is the scheduler's), both
      // instances ticking at once, in turn first.
      for (let round = 0; round < 4; round++) {
        await sql`UPDATE sync_state SET value = (now() - interval '1 hour')::text WHERE key = 'scheduler:last-run'`.execute(
          a.db,
        );
        const ticks = round % 2 === 0 ? [first.tick(), second.tick()] : [second.tick(), first.tick()];
        const outcomes = (await Promise.all(ticks)).sort();
        assert.equal(outcomes[1], 'ran', `round ${round}: ${outcomes.join(', ')}`);
        assert.match(outcomes[0]!, /^(busy|not due)$/, `round ${round}: ${outcomes.join(', ')}`);
        assert.equal(await lease(), undefined);
        assert.deepEqual(await advisoryLocks(), []);
      }
      assert.equal(ran.length, 5, `runs: ${ran.join(', ')}`);
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM chapters`.execute(a.db);
      assert.ok(Number(rows[0]!.n) > 0, 'the sync wrote through the pooler');
      // Every tick said what it did.
      const ticks = lines.filter((line) => line.tick);
      assert.equal(ticks.length, 10, JSON.stringify(lines));
      assert.equal(ticks.filter((line) => line.tick === 'ran').length, 5);
      assert.ok(ticks.some((line) => /busy, another instance is running the syncs \(lease held by /.test(line.msg)));
      await Promise.all([first.stop(), second.stop()]);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
  },
);

test(
  'migrations of a fresh database through PgBouncer, twenty times in a row, two instances at once the first time',
  { skip, timeout: 180_000 },
  async () => {
    // Two instances starting at once on a fresh database: one migrates, the other waits for it and finds nothing.
    await createDatabase('cds_migrate_together');
    const open = () => openDatabase({ databaseUrl: bouncer.url('cds_migrate_together'), poolMode: 'transaction' });
    const both = [await open(), await open()];
    try {
      const applied = await Promise.all(both.map((database) => migrateToLatest(database.db)));
      assert.deepEqual(applied.map((names) => names.length > 0).sort(), [false, true]);
    } finally {
      await Promise.all(both.map((database) => database.close()));
    }

    for (let run = 1; run <= 20; run++) {
      const name = `cds_migrate_${run}`;
      await createDatabase(name);
      // Other clients of the pooler on that database (a running service's): with them, two statements of one client
      // often run on different server connections. (Kysely's session lock, taken and released in two statements, was
      // left held by the third of such runs with these two clients, and the fifth hung.)
      const load = busy(name);
      try {
        const fresh = await runCli(['migrate'], pooled(name));
        assert.equal(fresh.code, 0, `run ${run}: ${fresh.stderr}`);
        assert.match(fresh.stderr, /applied: 0001_data_model/);
        const again = await runCli(['migrate'], pooled(name));
        assert.equal(again.code, 0, `run ${run}: ${again.stderr}`);
        assert.match(again.stderr, /up to date/);
      } finally {
        await load.stop();
      }
      assert.deepEqual(await advisoryLocks(), [], `run ${run} left a lock`);
      // (The pooler's idle server connections to it closed with it: the server's max_connections is 100.)
      if (run < 20) await query('postgres', `DROP DATABASE "${name}" WITH (FORCE)`);
    }
    // Past the pooler too (a lock stranded on a pooled connection used to hang direct connections as well).
    const past = await runCli(['migrate'], { DATABASE_URL: direct('cds_migrate_20') });
    assert.equal(past.code, 0, past.stderr);
    assert.match(past.stderr, /up to date/);
  },
);

test('a cds migrate killed while it holds the lock: the next one proceeds', { skip, timeout: 120_000 }, async () => {
  const name = 'cds_migrate_killed';
  await createDatabase(name);
  assert.equal((await runCli(['migrate'], pooled(name))).code, 0);
  // The migrations' lock (its bigint key: high half in classid, low half in objid).
  const low = String(MIGRATION_LOCK_ID & 0xffff_ffffn);
  const lockHolders = async () =>
    (await advisoryLocks()).filter((lock) => lock.datname === name && String(lock.objid) === low && lock.granted);

  // A session of the test holds Kysely's lock table: the next `cds migrate` takes the migrations' lock, then waits.
  const blocker = new pg.Client({ connectionString: direct(name) });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table kysely_migration_lock in access exclusive mode');
    const killed = spawn(process.execPath, [...CLI_ARGS, 'migrate'], {
      cwd: ROOT,
      env: childEnv(pooled(name)),
      stdio: 'ignore',
    });
    await until(async () => (await lockHolders()).length === 1, 'the killed migrate holds the lock');
    await until(
      async () =>
        (
          await blocker.query(
            "SELECT 1 FROM pg_locks WHERE relation = 'kysely_migration_lock'::regclass AND NOT granted",
          )
        ).rowCount === 1,
      'the killed migrate waits for the lock table',
    );
    killed.kill('SIGKILL');
    await exited(killed);

    // The next one, started at once, waits only as long as the killed one's last statement runs.
    const next = runCli(['migrate'], pooled(name));
    await blocker.query('rollback');
    const result = await next;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /up to date/);
  } finally {
    await blocker.end();
  }
  await until(async () => (await lockHolders()).length === 0, 'no lock left');
});

test(
  'a missing database through PgBouncer: one line with the createdb to run, from cds and from the server',
  { skip, timeout: 60_000 },
  async () => {
    const name = 'cds_missing_behind_pooler';
    const hint = new RegExp(
      `the database "${name}" does not exist behind the connection pooler at 127\\.0\\.0\\.1:\\d+ \\(.+\\); ` +
        `create it first on the PostgreSQL server behind the pooler: createdb -h <server> -p <port> -U postgres '${name}'`,
    );
    const cli = await runCli(['migrate'], pooled(name));
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, hint);
    assert.doesNotMatch(cli.stderr, /\n\s+at |Migration \(unknown\)|connection timeout/);

    // Right after: PgBouncer holds new logins to that database until it retries the failed one (15 s).
    const service = startServer({ ...pooled(name), PORT: String(await freePort()) });
    assert.equal(await exited(service), 1);
    assert.match(service.output(), /cannot open the database: the database "cds_missing_behind_pooler" does not exist/);
    assert.match(service.output(), /createdb -h <server>/);
    assert.doesNotMatch(service.output(), /"stack"|Migration \(unknown\)/);
    assert.deepEqual(await query('postgres', 'SELECT 1 FROM pg_database WHERE datname = $1', [name]), []);
  },
);
