// The embedded database runs beside the event loop (a worker thread, src/db/pglite-host.ts): while a slow
// statement runs on the service's own database handle, a cached response and /livez still answer, and they
// answer first. On the PostgreSQL engine the same holds through the pool's other connections, so the test runs
// on both. What completes first is asserted, never how long anything took.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { embeddedWorker, openDatabase } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { chapter } from './factories.ts';
import { serverUrl } from './helpers.ts';

let t: TestApp;

before(async () => {
  t = await buildTestApp();
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
});

after(() => t.close());

/** Lets everything already queued on the event loop (a statement being sent, for one) run first. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a slow statement on the database does not hold up a cached response or /livez', async () => {
  const url = '/api/v0/chapters/london';
  assert.equal((await t.app.inject({ method: 'GET', url })).headers['x-cache'], 'MISS');

  const done: string[] = [];
  // pg_sleep holds PGlite's one session (and, on the main thread, would hold the event loop) for 2 s.
  const slow = sql<{ slept: string }>`select pg_sleep(2)::text as slept`.execute(t.database.db).then((result) => {
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

test('a crashed worker: queries answer 503, cached responses and /livez still 200; the folder opens again with its data', { skip: serverUrl ? 'about the embedded database\'s worker thread (this pass runs on PostgreSQL)' : false }, async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-pglite-crash-'));
  const dataDir = path.join(dir, 'pglite');
  try {
    const database = await openDatabase({ dataDir });
    await migrateToLatest(database.db);
    await chapter(database.db, { key: 'london', name: 'OWASP London' });
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent', REST_AUTH: 'optional', RATE_LIMIT_PER_SECOND: '1000000' }), database });
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/api/v0/chapters/london' })).headers['x-cache'], 'MISS');
      await embeddedWorker(database)!.crash();

      const uncached = await app.inject({ method: 'GET', url: '/api/v0/chapters/' });
      assert.equal(uncached.statusCode, 503, uncached.body);
      assert.deepEqual(uncached.json(), { message: 'Service unavailable' });
      const cached = await app.inject({ method: 'GET', url: '/api/v0/chapters/london' });
      assert.equal(cached.statusCode, 200);
      assert.equal(cached.headers['x-cache'], 'HIT');
      assert.equal((await app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    } finally {
      await app.close();
      await database.close();
    }

    // The lock is released and the next open recovers the folder: what was committed is there.
    const reopened = await openDatabase({ dataDir });
    try {
      assert.deepEqual(await reopened.db.selectFrom('chapters').select('key').execute(), [{ key: 'london' }]);
    } finally {
      await reopened.close();
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
