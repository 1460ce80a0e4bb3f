// Named prepared statements on a PostgreSQL server (DATABASE_PREPARED_STATEMENTS, prepared.ts): what the server holds
// for a connection of the serving pool after the service's reads, and what it holds when they are off.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDb, serverUrl, type TestDatabase } from '../../../test/helpers.ts';
import { buildTestApp } from '../../../test/app.ts';
import { openDatabase, type Database } from '../index.ts';
import { MAX_PER_CONNECTION } from './prepared.ts';

const skip = serverUrl ? false : 'needs DATABASE_URL (prepared statements are a PostgreSQL server’s)';

let base: TestDatabase;
before(async () => {
  if (skip) return;
  base = await createTestDb({ importBundled: true });
});
after(() => base?.drop());

/** The statements the server keeps prepared for the one connection of `database`'s pool. */
const preparedOn = async (database: Database) =>
  (
    await sql<{ name: string; statement: string }>`
      SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'cds\\_%'`.execute(database.db)
  ).rows;

/** One connection for everything, so that what the app prepared is what the next statement's session holds. */
const single = (options: { preparedStatements?: boolean; poolMode?: 'session' | 'transaction' }) =>
  openDatabase({ databaseUrl: base.url!, poolSize: 1, ...options });

/** The test app on that one connection, without the response cache: every request reads. */
const app = async (database: Database) =>
  (
    await buildTestApp({
      sharedDatabase: { ...database, url: base.url, drop: () => database.close() },
      env: { RESPONSE_CACHE: 'false' },
    })
  ).app;

test(
  'the reads of a request are named prepared statements, one per text, used again; writes are not',
  { skip },
  async () => {
    const database = await single({ preparedStatements: true });
    const service = await app(database);
    try {
      for (const key of ['london', 'london', 'bogota']) {
        const res = await service.inject({ method: 'GET', url: `/api/v0/chapters/${key}` });
        assert.equal(res.statusCode, 200, res.body);
      }
      const before = await preparedOn(database);
      assert.ok(before.length > 0, 'no statement prepared');
      assert.ok(
        before.every((s) => /^\s*(select|with)\b/i.test(s.statement)),
        JSON.stringify(before),
      );
      assert.equal(new Set(before.map((s) => s.statement)).size, before.length, 'a text prepared twice');
      // The same detail again adds nothing: its statements are executed by name.
      await service.inject({ method: 'GET', url: '/api/v0/chapters/paris' });
      assert.deepEqual((await preparedOn(database)).map((s) => s.name).sort(), before.map((s) => s.name).sort());
      await database.db.updateTable('chapters').set({ name: 'OWASP London' }).where('key', '=', 'london').execute();
      assert.ok(!(await preparedOn(database)).some((s) => /^\s*update/i.test(s.statement)));
    } finally {
      await service.close();
      await database.close();
    }
  },
);

test('off by the setting, and always through a pooler in transaction mode: nothing is prepared', { skip }, async () => {
  for (const options of [
    { preparedStatements: false },
    { preparedStatements: true, poolMode: 'transaction' as const },
  ]) {
    const database = await single(options);
    const service = await app(database);
    try {
      assert.equal((await service.inject({ method: 'GET', url: '/api/v0/chapters/?limit=5' })).statusCode, 200);
      assert.equal((await service.inject({ method: 'GET', url: '/api/v0/chapters/london' })).statusCode, 200);
      assert.deepEqual(await preparedOn(database), [], JSON.stringify(options));
    } finally {
      await service.close();
      await database.close();
    }
  }
});

test(
  'a table altered under a prepared statement: the read is sent again unnamed outside a transaction; inside one the error is passed on',
  { skip },
  async () => {
    const database = await single({ preparedStatements: true });
    try {
      await sql`CREATE TABLE prepared_probe (id int)`.execute(database.db);
      await sql`INSERT INTO prepared_probe VALUES (1)`.execute(database.db);
      const read = () => sql<Record<string, unknown>>`SELECT * FROM prepared_probe`.execute(database.db);
      assert.deepEqual((await read()).rows, [{ id: 1 }]);
      await sql`ALTER TABLE prepared_probe ADD COLUMN label text DEFAULT 'x'`.execute(database.db);
      // Without the retry: "cached plan must not change result type".
      assert.deepEqual((await read()).rows, [{ id: 1, label: 'x' }]);
      assert.deepEqual((await read()).rows, [{ id: 1, label: 'x' }]);

      const inside = () => sql`SELECT * FROM prepared_probe WHERE id = ${1}`;
      await database.db.transaction().execute(async (trx) => inside().execute(trx));
      await sql`ALTER TABLE prepared_probe ADD COLUMN more int`.execute(database.db);
      await assert.rejects(
        database.db.transaction().execute(async (trx) => inside().execute(trx)),
        (error: { code?: string }) => error.code === '0A000',
      );
      // The connection is fine afterwards, and outside a transaction the same read answers.
      assert.equal((await inside().execute(database.db)).rows.length, 1);
    } finally {
      await sql`DROP TABLE IF EXISTS prepared_probe`.execute(database.db);
      await database.close();
    }
  },
);

test('at most MAX_PER_CONNECTION names on a connection; further texts run unnamed', { skip }, async () => {
  const database = await single({ preparedStatements: true });
  try {
    for (let i = 0; i < MAX_PER_CONNECTION + 20; i++) await sql`SELECT ${sql.lit(i)}::int AS n`.execute(database.db);
    assert.equal((await preparedOn(database)).length, MAX_PER_CONNECTION);
  } finally {
    await database.close();
  }
});
