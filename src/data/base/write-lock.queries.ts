// The write lock: an import and every sync batch take it before writing, so two never write at the same time, across
// processes and instances sharing one database. A transaction lock: released when the taker's transaction ends.
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';

/** The advisory lock's key. */
export const WRITE_LOCK = 727_001;

/** Waits for imports and other sync batches; released when the caller's transaction ends. */
export async function lockWrites(db: Db): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`.execute(db);
}
