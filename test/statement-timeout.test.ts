// The serving pool cancels statements that run past its statement_timeout; a cancelled statement
// is a 503 with Retry-After, never a 500, and the next request after the cause is gone succeeds.
// The slow statement is made deterministic: another session holds an exclusive lock on the table.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/index.ts';
import { chapter } from './factories.ts';
import { createTestDb, serverUrl, type TestDatabase } from './helpers.ts';

const skip = serverUrl
  ? false
  : "needs DATABASE_URL: PGlite has one connection, so no other session can hold a lock (runs in CI's PostgreSQL pass)";

let database: TestDatabase;
let serving: Database;
let app: Awaited<ReturnType<typeof buildApp>>;

before(async () => {
  if (skip) return;
  database = await createTestDb();
  await chapter(database.db, { key: 'london', latitude: 51.5, longitude: -0.12 });
  serving = await openDatabase({ databaseUrl: database.url, statementTimeoutMs: 300, poolSize: 3 });
  app = await buildApp({
    config: loadConfig({
      LOG_LEVEL: 'silent',
      REST_AUTH: 'optional',
      EDGE_MAX_AGE_S: '0',
      RATE_LIMIT_PER_SECOND: '1000000',
    }),
    database: serving,
  });
  await app.ready();
});

after(async () => {
  if (skip) return;
  await app.close();
  await serving.close();
  await database.drop();
});

test(
  'a statement cancelled by the timeout is a 503; the service answers again once the lock is gone',
  { skip },
  async () => {
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table chapters in access exclusive mode');
      for (const url of ['/api/v0/chapters/', '/api/v0/chapters/london']) {
        const started = Date.now();
        const res = await app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 503, `${url}: ${res.body}`);
        assert.deepEqual(res.json(), { message: 'Service unavailable', error_id: res.headers['x-request-id'] });
        assert.equal(res.headers['retry-after'], '5');
        assert.ok(Date.now() - started < 5_000, `${url} waited ${Date.now() - started} ms`);
      }
      await locker.query('rollback');
      assert.equal((await app.inject({ method: 'GET', url: '/api/v0/chapters/' })).statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/api/v0/chapters/london' })).statusCode, 200);
    } finally {
      await locker.end();
    }
  },
);
