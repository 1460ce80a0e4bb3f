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

/** What rotation found: the new key's row, or why there is none. */
export type RotationRow =
  | { status: 'rotated'; key: RotatedKey; endedGraceOf: string | null }
  | { status: 'not-found' | 'not-active' | 'already-rotated' };

export interface RotatedKey {
  uuid: string;
  name: string;
  created_at: Date;
  expires_at: Date;
  is_revoked: boolean;
  last_used_at: Date | null;
  leak_url: string | null;
  leak_reported_at: Date | null;
  revoked_at: Date | null;
}

/**
 * Replaces one of the user's valid keys by a new one (`digest`) of the same name and expiry, in one transaction: the
 * old key then lives until `graceEndsAt` (revoked at once when that is not after `now`). The user's row is locked as
 * createApiKey locks it, so a rotation and concurrent creations are counted one after the other; the new key is not
 * held to the limit of active keys (it takes the old one's place). At most one key of a rotation chain is in grace:
 * the old key's own predecessor, if it still works, is revoked (its uuid is `endedGraceOf`), so that rotating the new
 * key again and again cannot pile up working keys; a user has at most 3 active keys and 3 in grace. The revocation
 * counter moves, so every instance drops what it remembers of the old key (its expiry among it).
 */
export async function rotateKeyRow(
  db: Db,
  values: { userId: string; uuid: string; digest: string; graceEndsAt: Date; now: Date },
): Promise<RotationRow> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', values.userId).forUpdate().executeTakeFirstOrThrow();
    const old = await trx
      .selectFrom('api_keys')
      .select(['id', 'name', 'expires_at', 'is_revoked', 'replaced_by'])
      .where('user_id', '=', values.userId)
      .where('uuid', '=', values.uuid)
      .forUpdate()
      .executeTakeFirst();
    if (!old) return { status: 'not-found' as const };
    if (old.replaced_by !== null) return { status: 'already-rotated' as const };
    if (old.is_revoked || old.expires_at.getTime() <= values.now.getTime()) return { status: 'not-active' as const };
    const key = await trx
      .insertInto('api_keys')
      .values({ user_id: values.userId, name: old.name, digest: values.digest, expires_at: old.expires_at })
      .returning([
        'id',
        'uuid',
        'name',
        'created_at',
        'expires_at',
        'is_revoked',
        'last_used_at',
        'leak_url',
        'leak_reported_at',
        'revoked_at',
      ])
      .executeTakeFirstOrThrow();
    const ended = await trx
      .updateTable('api_keys')
      .set({ is_revoked: true, revoked_at: sql`coalesce(revoked_at, now())` })
      .where('user_id', '=', values.userId)
      .where('replaced_by', '=', old.id)
      .where('is_revoked', '=', false)
      .where('expires_at', '>', values.now)
      .returning('uuid')
      .executeTakeFirst();
    const immediately = values.graceEndsAt.getTime() <= values.now.getTime();
    await trx
      .updateTable('api_keys')
      .set(
        immediately
          ? { replaced_by: key.id, is_revoked: true, revoked_at: sql`coalesce(revoked_at, now())` }
          : {
              replaced_by: key.id,
              expires_at: sql`least(expires_at, ${values.graceEndsAt.toISOString()}::timestamptz)`,
            },
      )
      .where('id', '=', old.id)
      .execute();
    await bumpRevocations(trx);
    const { id: _id, ...rotated } = key;
    return { status: 'rotated' as const, key: rotated, endedGraceOf: ended?.uuid ?? null };
  });
}

/** A token of a secret-scanning report, by the digest of the key it would be. */
export interface LeakReport {
  digest: string;
  url: string;
  source: string;
}

/**
 * Revokes every key among `reports` (by digest) at once and records where it was found (the first report of a key
 * stays). Returns the digests that are keys of this service, in any state: a key already revoked or expired is still
 * a real key that was published. The revocation counter moves when any key was found.
 */
export async function revokeLeakedKeyRows(
  db: Db,
  reports: readonly LeakReport[],
  now: Date,
): Promise<{ digest: string; uuid: string; userId: string; wasValid: boolean }[]> {
  if (reports.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const found = await trx
      .selectFrom('api_keys')
      .select(['id', 'uuid', 'user_id', 'digest', 'is_revoked', 'expires_at'])
      .where(
        'digest',
        'in',
        reports.map((report) => report.digest),
      )
      .forUpdate()
      .execute();
    if (found.length === 0) return [];
    for (const key of found) {
      const report = reports.find((candidate) => candidate.digest === key.digest)!;
      await trx
        .updateTable('api_keys')
        .set({
          is_revoked: true,
          revoked_at: sql`coalesce(revoked_at, now())`,
          leak_url: sql`coalesce(leak_url, ${report.url})`,
          leak_source: sql`coalesce(leak_source, ${report.source})`,
          leak_reported_at: sql`coalesce(leak_reported_at, now())`,
        })
        .where('id', '=', key.id)
        .execute();
    }
    await bumpRevocations(trx);
    return found.map((key) => ({
      digest: key.digest,
      uuid: key.uuid,
      userId: key.user_id,
      wasValid: !key.is_revoked && key.expires_at.getTime() > now.getTime(),
    }));
  });
}
