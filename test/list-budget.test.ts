// On a PostgreSQL server list queries have a budget of their own (LIST_POOL_SIZE, LIST_STATEMENT_TIMEOUT_MS,
// LIST_QUEUE_LENGTH): a slow list is cancelled sooner than other statements, and lists holding every
// connection of their pool leave details and the rest of the service their own connections.
// Slow statements are made deterministic by another session holding a lock on a table. On the embedded database, whose
// one session every query shares, the list queries waiting for it are bounded by LIST_QUEUE_LENGTH the same way.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/index.ts';
import { chapter, organization } from './factories.ts';
import { createTestDb, serverUrl, type TestDatabase } from './helpers.ts';

const skip = serverUrl
  ? false
  : 'needs DATABASE_URL: pools and statement timeouts are those of a PostgreSQL server; PGlite has one session, where lists run on it like every other query';

const config = loadConfig({
  LOG_LEVEL: 'silent',
  REST_AUTH: 'optional',
  EDGE_MAX_AGE_S: '0',
  RATE_LIMIT_PER_SECOND: '1000000',
  RESPONSE_CACHE: 'false',
});
let database: TestDatabase;

before(async () => {
  if (skip) return;
  database = await createTestDb();
  await chapter(database.db, { key: 'london' });
  await organization(database.db, { login: 'owasp' });
});

after(async () => {
  if (skip) return;
  await database.drop();
});

async function serve(lists: { poolSize: number; statementTimeoutMs: number; queueLength: number }) {
  const serving = await openDatabase({ databaseUrl: database.url, statementTimeoutMs: 60_000, lists });
  const app = await buildApp({ config, database: serving });
  await app.ready();
  return {
    app,
    serving,
    async close() {
      await app.close();
      await serving.close();
    },
  };
}

/** Another session holding `table` in ACCESS EXCLUSIVE mode until release(): every statement reading it waits. */
async function lockTable(table: string) {
  const locker = new pg.Client({ connectionString: database.url });
  await locker.connect();
  await locker.query('begin');
  await locker.query(`lock table ${table} in access exclusive mode`);
  return {
    async release() {
      await locker.query('rollback');
      await locker.end();
    },
  };
}

test(
  'a list past the list timeout is a 503 with our body while a detail waiting on the same lock is not cancelled; the list connection is free again',
  { skip },
  async () => {
    const { app, close } = await serve({ poolSize: 2, statementTimeoutMs: 300, queueLength: 10 });
    const lock = await lockTable('chapters');
    let detailDone = false;
    try {
      // Started first and waiting on the lock as long as the list does, under the serving pool's 60 s timeout.
      const detail = app.inject({ method: 'GET', url: '/api/v0/chapters/london' }).then((res) => {
        detailDone = true;
        return res;
      });
      const list = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
      assert.equal(list.statusCode, 503, list.body);
      assert.deepEqual(list.json(), { message: 'Service unavailable', error_id: list.headers['x-request-id'] });
      assert.equal(list.headers['retry-after'], '5');
      assert.equal(detailDone, false, 'the detail cannot have finished while the table is locked');
      // Another table, another pool: answered while the lock is held.
      assert.equal((await app.inject({ method: 'GET', url: '/api/v0/organizations/owasp' })).statusCode, 200);
      await lock.release();
      const res = await detail;
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().key, 'london');
      // The cancelled list statements gave their connections back: the list pool serves again.
      for (let i = 0; i < 3; i++) {
        const again = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(again.json().count, 1);
      }
    } finally {
      await lock.release().catch(() => undefined);
      await close();
    }
  },
);

test(
  'with every list connection held, details and other requests are answered and one list too many gets a 503 at once',
  { skip },
  async () => {
    const { app, serving, close } = await serve({ poolSize: 2, statementTimeoutMs: 60_000, queueLength: 0 });
    const lists = serving.lists;
    assert.ok(lists, 'a server database opened with a list budget has a list pool');
    // Both connections of the list pool, each in a statement that waits for the test to let it go.
    const lock = await lockTable('sponsors');
    const held = [0, 1].map(() =>
      lists.connection().execute((connection) => sql`select count(*) from sponsors`.execute(connection)),
    );
    try {
      await waitForLockWaits(2);
      assert.equal((await app.inject({ method: 'GET', url: '/api/v0/chapters/london' })).statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/api/v0/organizations/owasp' })).statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/status/' })).statusCode, 200);
      const refused = await app.inject({ method: 'GET', url: '/api/v0/organizations/' });
      assert.equal(refused.statusCode, 503, refused.body);
      assert.deepEqual(refused.json(), { message: 'Service unavailable', error_id: refused.headers['x-request-id'] });
      assert.equal(refused.headers['retry-after'], '5');
      await lock.release();
      await Promise.all(held);
      const served = await app.inject({ method: 'GET', url: '/api/v0/organizations/' });
      assert.equal(served.statusCode, 200, served.body);
      assert.equal(served.json().count, 1);
    } finally {
      await lock.release().catch(() => undefined);
      await Promise.allSettled(held);
      await close();
    }
  },
);

/** Until `n` sessions of the list pool wait for a lock (each check is a query; no timer). */
async function waitForLockWaits(n: number): Promise<void> {
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from pg_stat_activity
      where datname = current_database() and application_name = 'cds lists' and wait_event_type = 'Lock'`.execute(
      database.db,
    );
    if (Number(rows[0]!.n) >= n) return;
  }
  throw new Error(`fewer than ${n} list sessions waiting for the lock`);
}

test(
  'on the embedded database, list queries waiting for its one session are bounded: one more gets a 503 at once',
  { skip: serverUrl ? 'the embedded database only (a server has the list pool above)' : false },
  async () => {
    const embedded = await createTestDb({ lists: { poolSize: 1, statementTimeoutMs: 60_000, queueLength: 1 } });
    await chapter(embedded.db, { key: 'london' });
    // The service's warnings and errors, shown by a failure (a 503 logs its cause: error-handling.ts).
    const logged: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({ write: (chunk: Buffer, _encoding, done) => (logged.push(chunk.toString()), done()) }),
    );
    const app = await buildApp({ config, database: embedded, logger });
    await app.ready();
    // The one session, held by a transaction-like piece of work until the test lets it go.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const acquired = new Promise<void>((resolve) => (holding = resolve));
    const held = embedded.db.connection().execute(async () => {
      holding();
      await gate;
    });
    try {
      await acquired;
      // One list query waits for the session (the queue's one place); a detail waits too, unbounded.
      const waiting = embedded.lists!.selectFrom('chapters').select('key').execute();
      const detail = app.inject({ method: 'GET', url: '/api/v0/chapters/london' });
      await new Promise((resolve) => setImmediate(resolve));
      const refused = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
      assert.equal(refused.statusCode, 503, refused.body);
      assert.deepEqual(refused.json(), { message: 'Service unavailable', error_id: refused.headers['x-request-id'] });
      assert.equal(refused.headers['retry-after'], '5');
      release();
      await held;
      assert.deepEqual(await waiting, [{ key: 'london' }], 'the list query that waited is answered');
      const answered = await detail;
      assert.equal(
        answered.statusCode,
        200,
        `the detail that waited is answered: ${answered.body}\n${logged.join('')}`,
      );
      const served = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
      assert.equal(served.statusCode, 200, served.body);
      assert.equal(served.json().count, 1);
    } finally {
      release();
      await held.catch(() => undefined);
      await app.close();
      await embedded.drop();
    }
  },
);
