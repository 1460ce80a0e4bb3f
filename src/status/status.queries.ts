import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

/** The smallest round trip: resolves when the database answers. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
