// "Change, then announce": the writes that other instances must hear of, each followed by its
// announcement. Data changes are written by the imports and syncs (data/), in their own transactions
// with bumpDataVersion, and announced after commit with announceDataChanged.
import type { Db } from '../db/index.ts';
import type { Announcer } from './announce.ts';
import { revokeKeyRow } from './revocations.queries.ts';

/** Revokes one of the user's keys, then announces it; false (and nothing announced) when the user has no such key. */
export async function revokeKey(db: Db, userId: string, uuid: string, announcer: Announcer): Promise<boolean> {
  const revoked = await revokeKeyRow(db, userId, uuid);
  if (revoked) await announcer.revocation();
  return revoked;
}
