import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { bumpRevocations } from './counters.queries.ts';

/**
 * Revokes one of the user's keys; false when the user has no key with that uuid. The revocation
 * counter moves in the same transaction, so every instance's memory of valid keys is dropped.
 */
export async function revokeKeyRow(db: Db, userId: string, uuid: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('api_keys')
      .set({ is_revoked: true, revoked_at: sql`coalesce(revoked_at, now())` })
      .where('user_id', '=', userId)
      .where('uuid', '=', uuid)
      .returning('id')
      .executeTakeFirst();
    if (row) await bumpRevocations(trx);
    return row !== undefined;
  });
}
