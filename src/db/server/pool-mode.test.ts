// DATABASE_POOL_MODE=transaction: what each statement and transaction sends (pool-mode.ts), and on a PostgreSQL server
// that the settings hold inside each transaction and nowhere else. (Through a real PgBouncer: test/pgbouncer.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDb, serverUrl, type TestDatabase } from '../../../test/helpers.ts';
import { openDatabase, type Database } from '../index.ts';
import { TRIGRAM_START_PARAMS } from '../migrations/0011_fulltext_search.ts';
import { sessionSettings, settingsPerTransaction, startupParameters } from './pool-mode.ts';

const SET_LOCAL =
  "SET LOCAL statement_timeout = '3000'; SET LOCAL pg_trgm.word_similarity_threshold = '0.4'; " +
  "SET LOCAL pg_trgm.similarity_threshold = '0.2'; SET LOCAL jit = 'off'";
/** The start-up parameters of every session: pg_trgm's thresholds, no JIT. */
const START_OPTIONS = [...TRIGRAM_START_PARAMS, '-c', 'jit=off'].join(' ');

/** A client's query that records what it is sent; `fail` rejects the statements it matches. */
function recorder(fail?: RegExp) {
  const sent: string[] = [];
  const query = (text: string) => {
    sent.push(text);
    if (fail?.test(text))
      return Promise.reject(
        Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      );
    return Promise.resolve(
      text.includes(';') ? [{ command: 'BEGIN' }, { command: 'SET' }] : { command: 'SELECT', rows: [] },
    );
  };
  return { sent, query };
}

test('session mode: the settings are start-up parameters, as before', () => {
  assert.deepEqual(startupParameters(sessionSettings(3_000)), {
    statement_timeout: 3_000,
    options: START_OPTIONS,
  });
  assert.deepEqual(startupParameters(sessionSettings(undefined)), { options: START_OPTIONS });
});

test('transaction mode: a statement alone runs in a transaction of its own that sets them first', async () => {
  const { sent, query } = recorder();
  const client = settingsPerTransaction(query, sessionSettings(3_000));
  assert.deepEqual(await client.query('select $1', [1]), { command: 'SELECT', rows: [] });
  assert.deepEqual(sent, [`BEGIN; ${SET_LOCAL}`, 'select $1', 'COMMIT']);
  assert.equal(client.inTransaction, false);
});

test('transaction mode: a failed statement is rolled back and its error passed on', async () => {
  const { sent, query } = recorder(/pg_sleep/);
  const client = settingsPerTransaction(query, sessionSettings(3_000));
  await assert.rejects(client.query('select pg_sleep(10)', []), { code: '57014' });
  assert.deepEqual(sent, [`BEGIN; ${SET_LOCAL}`, 'select pg_sleep(10)', 'ROLLBACK']);
});

test("transaction mode: Kysely's begin carries them in the same round trip; the transaction's statements pass", async () => {
  const { sent, query } = recorder();
  const client = settingsPerTransaction(query, sessionSettings(3_000));
  assert.deepEqual(await client.query('begin', []), { command: 'BEGIN' }, "begin's own result");
  assert.equal(client.inTransaction, true);
  await client.query('savepoint s1', []);
  await client.query('rollback to s1', []);
  await client.query('select 1', []);
  assert.equal(client.inTransaction, true, '`rollback to` a savepoint does not end it');
  await client.query('commit', []);
  assert.equal(client.inTransaction, false);
  await client.query('start transaction isolation level serializable', []);
  await client.query('rollback', []);
  assert.deepEqual(sent, [
    `begin; ${SET_LOCAL}`,
    'savepoint s1',
    'rollback to s1',
    'select 1',
    'commit',
    `start transaction isolation level serializable; ${SET_LOCAL}`,
    'rollback',
  ]);
});

const skip = serverUrl ? false : 'needs DATABASE_URL (pool modes are a PostgreSQL server’s)';
let database: TestDatabase;
let pooled: Database;

/** A setting as a session of `db` sees it. */
const show = async (db: Database['db'], name: string) =>
  (await sql<{ value: string }>`SELECT current_setting(${name}) AS value`.execute(db)).rows[0]!.value;

before(async () => {
  if (skip) return;
  database = await createTestDb();
  pooled = await openDatabase({ databaseUrl: database.url, poolMode: 'transaction', statementTimeoutMs: 300 });
});

after(async () => {
  if (skip) return;
  await pooled.close();
  await database.drop();
});

test(
  'transaction mode on a server: the timeout cancels, SET LOCAL holds in its transaction only',
  { skip },
  async () => {
    assert.equal(await show(pooled.db, 'statement_timeout'), '300ms');
    assert.equal(await show(pooled.db, 'pg_trgm.similarity_threshold'), '0.2');
    assert.equal(await show(pooled.db, 'jit'), 'off');
    await assert.rejects(sql`SELECT pg_sleep(5)`.execute(pooled.db), { code: '57014' });
    await pooled.db.transaction().execute(async (trx) => {
      assert.equal(await show(trx, 'statement_timeout'), '300ms');
      await sql`SET LOCAL statement_timeout = 0`.execute(trx);
      assert.equal(await show(trx, 'statement_timeout'), '0');
    });
    assert.equal(await show(pooled.db, 'statement_timeout'), '300ms', 'the transaction’s own SET LOCAL ended with it');
    // Nothing was set for the session (start-up parameters would be: the value RESET goes back to).
    const { rows } = await sql<{ reset_val: string }>`
    SELECT reset_val FROM pg_settings WHERE name = 'statement_timeout'`.execute(pooled.db);
    assert.equal(rows[0]!.reset_val, '0');
  },
);

test(
  'no JIT in any session of the service: its pools in session mode, the list pool, transaction mode',
  { skip },
  async () => {
    // The server's own default is on: the sessions' setting is what turns it off.
    const { rows } = await sql<{ boot_val: string }>`SELECT boot_val FROM pg_settings WHERE name = 'jit'`.execute(
      database.db,
    );
    assert.equal(rows[0]!.boot_val, 'on');
    const served = await openDatabase({
      databaseUrl: database.url!,
      statementTimeoutMs: 3_000,
      lists: { poolSize: 1, statementTimeoutMs: 1_000, queueLength: 1 },
    });
    try {
      assert.equal(await show(served.db, 'jit'), 'off');
      assert.equal(await show(served.lists!, 'jit'), 'off');
      assert.equal(await show(database.db, 'jit'), 'off', "the tests' own pool, as the commands open theirs");
      assert.equal(await show(pooled.db, 'jit'), 'off');
    } finally {
      await served.close();
    }
  },
);
