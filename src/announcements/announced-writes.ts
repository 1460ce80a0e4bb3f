// "Change, then announce": the writes that other instances must hear of, each followed by its
// announcement. Data changes are written by the imports and syncs (data/), in their own transactions
// with bumpDataVersion, and announced after commit with announceDataChanged.
import type { Db } from '../db/index.ts';
import type { Announcer } from './announce.ts';
import {
  revokeKeyRow,
  revokeLeakedKeyRows,
  rotateKeyRow,
  type LeakReport,
  type RotationRow,
} from './revocations.queries.ts';

/** Revokes one of the user's keys, then announces it; false (and nothing announced) when the user has no such key. */
export async function revokeKey(db: Db, userId: string, uuid: string, announcer: Announcer): Promise<boolean> {
  const revoked = await revokeKeyRow(db, userId, uuid);
  if (revoked) await announcer.revocation();
  return revoked;
}

/**
 * Rotates one of the user's keys (revocations.queries.ts, rotateKeyRow), then announces it like a revocation: the old
 * key's new expiry (or its revocation) must reach every instance's memory of valid keys.
 */
export async function rotateKey(
  db: Db,
  values: Parameters<typeof rotateKeyRow>[1],
  announcer: Announcer,
): Promise<RotationRow> {
  const rotated = await rotateKeyRow(db, values);
  if (rotated.status === 'rotated') await announcer.revocation();
  return rotated;
}

/** Revokes the keys of a secret-scanning report at once, then announces it when any was found. */
export async function revokeLeakedKeys(db: Db, reports: readonly LeakReport[], now: Date, announcer: Announcer) {
  const found = await revokeLeakedKeyRows(db, reports, now);
  if (found.length > 0) await announcer.revocation();
  return found;
}
