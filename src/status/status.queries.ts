import { sql } from 'kysely';
import type { Database, Db } from '../db/index.ts';

/** The smallest round trip: resolves when the database answers. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * The readiness probe's check: resolves when the database answers within `timeoutMs`. On a PostgreSQL server a probe
 * that gives up also gives its connection back (Database.ping); the embedded database has no such ping (the
 * caller's own limit applies).
 */
export async function probeDatabase(database: Database, timeoutMs: number): Promise<void> {
  if (database.ping) await database.ping(timeoutMs);
  else await pingDatabase(database.db);
}
