// One embedded test database kept per worker process of `npm test` (test/runner/group.js runs several test files in one
// process, one after another): a file that drops its migrated database hands it back emptied instead of closing it,
// and the next file's createTestDb() takes it instead of opening a new one from the template (~0.6 s of CPU: a
// worker thread, PGlite's start, the template's 43 MB). Each file still starts from what a fresh copy of the template
// holds, checked, not assumed:
// - fenced: the dropped handle's connection pool is ended and the next file gets a new one, so nothing the last file
//   left running can reach it;
// - emptied: DISCARD ALL (the session's settings, prepared statements, temporary tables, advisory locks, LISTEN), then
//   TRUNCATE … RESTART IDENTITY of every table but the migrations' own (the template's only rows);
// - compared: a digest of the catalog (schemas, tables and their columns, defaults, constraints, indexes, triggers,
//   functions, types, extensions, sequences, statistics, roles, databases, per-database settings, the migrations
//   table, every table's page and row estimates) must equal the one of a database freshly loaded from the template.
//   Anything else (a test created or altered something, ran ANALYZE, left a transaction open, crashed or closed the
//   worker) and the database is closed instead, as before.
// Only `createTestDb()` of the migrated template is kept (not the bundled one, not a data folder).
// TEST_REUSE_DB=0 turns it off (every database opened from the template, closed when dropped).
import { sql } from 'kysely';
import { embeddedDb, type Database } from '../src/db/index.ts';
import type { PgliteSupervisor } from '../src/db/embedded/pglite-supervisor.ts';

interface Spares {
  /** The digest of a freshly loaded template, once known. */
  fresh?: string;
  /** Its indexes' page and row estimates. */
  indexes?: { name: string; pages: number; tuples: number }[];
  spare?: Database;
  /** How many databases were taken again, and how many were closed after a mismatch (in TEST_CPU_LOG's lines). */
  reused: number;
  refused: number;
}

// Process-wide: each test file is a bundle with its own copy of this module.
const state = ((globalThis as { [key: symbol]: unknown })[Symbol.for('cds-test-spare-db')] ??= {
  reused: 0,
  refused: 0,
}) as Spares;

const enabled = process.env.TEST_REUSE_DB !== '0' && process.env.CDS_TEST_BUILD !== undefined;

/** The kept database, if any (it is then the caller's). */
export function takeSpare(): Database | undefined {
  const spare = state.spare;
  state.spare = undefined;
  if (spare) state.reused++;
  return spare;
}

/** Records the digest of a database just loaded from the template (once per process). */
export async function noteFresh(database: Database): Promise<void> {
  if (!enabled || state.fresh !== undefined) return;
  const { rows } = await sql<{ name: string; pages: number; tuples: number }>`
    SELECT relname AS name, relpages AS pages, reltuples AS tuples FROM pg_class
    WHERE relnamespace = 'public'::regnamespace AND relkind = 'i'`.execute(database.db);
  state.indexes = rows;
  state.fresh = await digest(database);
}

/** Empties the dropped database and keeps it when it equals a fresh one; closes it otherwise. */
export async function recycle(database: Database): Promise<void> {
  if (!enabled || state.spare || state.fresh === undefined || database.embedded?.state !== 'running')
    return database.close();
  const embedded = database.embedded as PgliteSupervisor;
  let kept: Database | undefined;
  try {
    // The dropped database's connection pool is ended first: whatever its file still holds (an app left open, a late
    // timer) fails from now on, as it did when the database was closed, instead of reaching the next file's data.
    await within(5_000, database.db.destroy());
    kept = reconnect(database, embedded);
    await within(5_000, reset(kept));
    if ((await within(5_000, digest(kept))) === state.fresh) {
      state.spare = kept;
      return;
    }
  } catch {
    // not kept
  }
  state.refused++;
  if (kept) await within(5_000, kept.db.destroy()).catch(() => {});
  await embedded.close();
}

/** The same embedded database behind a new connection pool. */
function reconnect(database: Database, embedded: PgliteSupervisor): Database {
  const db = embeddedDb(embedded);
  return {
    ...database,
    db,
    async close() {
      await db.destroy();
      await embedded.close();
    },
  };
}

async function reset({ db }: Database): Promise<void> {
  // Outside any transaction: a transaction left open fails this, and the database is closed.
  await sql`DISCARD ALL`.execute(db);
  const { rows } = await sql<{ name: string }>`
    SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables
    WHERE schemaname = 'public' AND tablename NOT IN ('kysely_migration', 'kysely_migration_lock')`.execute(db);
  if (rows.length > 0)
    await sql.raw(`TRUNCATE TABLE ${rows.map((row) => row.name).join(', ')} RESTART IDENTITY CASCADE`).execute(db);
  // TRUNCATE gives each index new, empty storage estimated as unknown (0 pages, -1 rows); the template's indexes, built
  // by CREATE INDEX on empty tables, say what that build found (1 or 2 pages, 0 rows), which the planner reads for
  // partial indexes: those estimates are put back.
  await sql`
    UPDATE pg_class c SET relpages = fresh.pages, reltuples = fresh.tuples
    FROM json_to_recordset(${JSON.stringify(state.indexes)}::json) AS fresh(name text, pages int, tuples real)
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'i' AND c.relname = fresh.name`.execute(db);
}

async function digest({ db }: Database): Promise<string> {
  const { rows } = await sql<{ digest: string }>`
    SELECT md5(string_agg(line, E'\n' ORDER BY line)) AS digest FROM (
      SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\_temp\_%' AND nspname NOT LIKE 'pg\_toast\_temp\_%'
      UNION ALL
      SELECT concat_ws(' ', 'relation', n.nspname, c.relname, c.relkind, c.relnatts, c.relpages, c.reltuples,
        c.relallvisible, c.relhastriggers, c.relrowsecurity, c.relpersistence, c.reloptions::text)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
      UNION ALL
      SELECT concat_ws(' ', 'column', a.attrelid::regclass, a.attname, a.atttypid::regtype, a.attnotnull, a.atthasdef,
        a.attidentity, a.attgenerated, a.attstattarget)
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
      UNION ALL
      SELECT concat_ws(' ', 'default', d.adrelid::regclass, d.adnum, pg_get_expr(d.adbin, d.adrelid)) FROM pg_attrdef d
      UNION ALL
      SELECT concat_ws(' ', 'constraint', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint
      WHERE connamespace = 'public'::regnamespace
      UNION ALL
      SELECT concat_ws(' ', 'index', i.indexrelid::regclass, pg_get_indexdef(i.indexrelid), i.indisvalid)
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = 'public'::regnamespace
      UNION ALL
      SELECT concat_ws(' ', 'trigger', tgrelid::regclass, tgname, tgenabled, tgfoid::regproc) FROM pg_trigger
      WHERE NOT tgisinternal
      UNION ALL
      SELECT concat_ws(' ', 'function', p.oid::regprocedure, md5(p.prosrc), p.provolatile) FROM pg_proc p
      WHERE p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
      UNION ALL
      SELECT concat_ws(' ', 'type', t.oid::regtype, t.typtype) FROM pg_type t
      WHERE t.typnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace, 'pg_toast'::regnamespace)
      UNION ALL
      SELECT concat_ws(' ', 'extension', extname, extversion) FROM pg_extension
      UNION ALL
      SELECT concat_ws(' ', 'sequence', schemaname, sequencename, coalesce(last_value::text, 'unused')) FROM pg_sequences
      UNION ALL
      SELECT 'statistics ' || (SELECT count(*) FROM pg_statistic) || ' ' || (SELECT count(*) FROM pg_statistic_ext)
      UNION ALL
      SELECT 'large objects ' || count(*) FROM pg_largeobject_metadata
      UNION ALL
      SELECT concat_ws(' ', 'role', rolname, rolsuper, rolcanlogin) FROM pg_roles
      UNION ALL
      SELECT 'database ' || datname FROM pg_database
      UNION ALL
      SELECT concat_ws(' ', 'setting', setdatabase, setrole, setconfig::text) FROM pg_db_role_setting
      UNION ALL
      SELECT concat_ws(' ', 'migration', name, timestamp) FROM kysely_migration
      UNION ALL
      SELECT concat_ws(' ', 'migration lock', id, is_locked) FROM kysely_migration_lock
    ) AS catalog(line)`.execute(db);
  return rows[0]!.digest;
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the test database did not answer')), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
