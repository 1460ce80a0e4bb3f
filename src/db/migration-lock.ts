// The migrations' lock is a transaction lock (issue 29). Kysely's PostgresAdapter takes a session advisory lock
// (`pg_advisory_lock`, with a one-hour lock_timeout) in one statement and releases it in another, outside the
// migrations' transaction: through a pooler in transaction mode the two statements may run on different server
// connections, and the lock then stays held by a pooled connection; every later start and `cds migrate` (direct
// connections too) waited for it. migrate.ts runs the migrations in one transaction that takes the lock first, as
// `pg_advisory_xact_lock`: it cannot outlive that transaction, whether it commits, rolls back or its client is killed
// (PostgreSQL ends the backend of a closed connection; PgBouncer closes a server connection whose client left inside
// a transaction).
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  sql,
  type DialectAdapter,
  type KyselyConfig,
  type PostgresPool,
} from 'kysely';
import type { DB } from './schema.ts';

/** Kysely's own key: an older instance on Kysely's session lock and this one still exclude each other. */
export const MIGRATION_LOCK_ID = 3853314791062309107n;

/**
 * Waits for the migrations' lock (an hour at most, as Kysely did; the transaction's other lock waits too), held until
 * the caller's transaction ends. Outside a transaction it holds nothing.
 */
export async function lockMigrations<T>(db: Kysely<T>): Promise<void> {
  await sql`SET LOCAL lock_timeout = '1h'`.execute(db);
  await sql`SELECT pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_ID)})`.execute(db);
}

/** Kysely's Migrator asks the dialect's adapter for its lock, on the connection of migrate.ts's transaction. */
class TransactionLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await lockMigrations(db);
  }

  override async releaseMigrationLock(): Promise<void> {
    // Released by the transaction's end: an unlock statement could run in another session (or, after a failed
    // migration, in an aborted transaction, where it fails and leaves a session lock behind).
  }
}

/** Kysely's PostgreSQL dialect, with the migrations' lock above. */
export class TransactionLockDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionLockAdapter();
  }
}

/** The service's query builder over `pool` (every pool of db/: the server's, its list pool, the embedded one's). */
export function kyselyOver(pool: PostgresPool, log?: KyselyConfig['log']): Kysely<DB> {
  return new Kysely<DB>({ dialect: new TransactionLockDialect({ pool }), log });
}
