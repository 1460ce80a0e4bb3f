import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

const PUBLIC_COLUMNS = [
  'uuid',
  'name',
  'created_at',
  'expires_at',
  'is_revoked',
  'last_used_at',
  'revoked_at',
  'leak_url',
  'leak_reported_at',
] as const;

// Expiry is read on the time of the instance that asks (its app clock, `now`), not on the database's now(): as the
// reference does (Django's timezone.now()), and so that a test can move it. Instances on one database are expected to
// keep their clocks synchronised (NTP); a skew of a second moves an expiry by that second on that instance.

/** Valid keys at `now`: not revoked and not expired. */
function validKeys(db: Db, userId: string, now: Date) {
  return db
    .selectFrom('api_keys')
    .where('user_id', '=', userId)
    .where('is_revoked', '=', false)
    .where('expires_at', '>', now);
}

export function listValidKeys(db: Db, userId: string, now: Date) {
  return validKeys(db, userId, now)
    .select(PUBLIC_COLUMNS)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function countValidKeys(db: Db, userId: string, now: Date): Promise<number> {
  const row = await validKeys(db, userId, now)
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}

/**
 * Inserts a key unless the user already has `limit` valid ones. The user's row is locked for the
 * transaction, so concurrent creations by one user are counted one after the other.
 */
export async function insertKeyWithinLimit(
  db: Db,
  values: { userId: string; name: string; digest: string; expiresAt: Date },
  limit: number,
  now: Date,
) {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', values.userId).forUpdate().executeTakeFirstOrThrow();
    if ((await countValidKeys(trx, values.userId, now)) >= limit) return undefined;
    return trx
      .insertInto('api_keys')
      .values({ user_id: values.userId, name: values.name, digest: values.digest, expires_at: values.expiresAt })
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirstOrThrow();
  });
}

export function findKeyByUuid(db: Db, uuid: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'user_id', ...PUBLIC_COLUMNS])
    .where('uuid', '=', uuid)
    .executeTakeFirst();
}

/** The key with this digest, if it is valid at `now`. */
export function findValidKeyByDigest(db: Db, digest: string, now: Date) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'user_id', 'expires_at'])
    .where('digest', '=', digest)
    .where('is_revoked', '=', false)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** The first `length` hex digits of the digest of every key valid at `now` (access/known-keys.ts). */
export async function listValidDigestPrefixes(db: Db, length: number, now: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(sql<string>`left(digest, ${sql.lit(length)})`.as('prefix'))
    .where('is_revoked', '=', false)
    .where('expires_at', '>', now)
    .execute();
  return rows.map((row) => row.prefix);
}

export async function recordLastUsed(db: Db, uses: Map<string, Date>): Promise<void> {
  if (uses.size === 0) return;
  const values = [...uses].map(([id, at]) => sql`(${id}::bigint, ${at.toISOString()}::timestamptz)`);
  await sql`
    UPDATE api_keys SET last_used_at = v.at
    FROM (VALUES ${sql.join(values)}) AS v(id, at)
    WHERE api_keys.id = v.id AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < v.at)
  `.execute(db);
}

/**
 * Every key of the user, oldest first, with whether it was replaced by a rotation and whether it was revoked by hand
 * during its grace period (for `cds keys list`). A rotation revokes a key in its own transaction, so that key's
 * `revoked_at` is the `created_at` of the key the rotation made (now() is the transaction's time); a revocation by
 * hand before the grace ended has no such twin.
 */
export function findKeysOfUser(db: Db, userId: string) {
  return db
    .selectFrom('api_keys')
    .select(PUBLIC_COLUMNS)
    .select(sql<boolean>`replaced_by IS NOT NULL`.as('is_rotated'))
    .select(
      sql<boolean>`(replaced_by IS NOT NULL AND is_revoked AND revoked_at < expires_at AND NOT EXISTS (
        SELECT 1 FROM api_keys made WHERE made.user_id = api_keys.user_id AND made.created_at = api_keys.revoked_at))`.as(
        'is_revoked_in_grace',
      ),
    )
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
}

/** The user's keys that GitHub's secret scanning reported published since `since` (and that were revoked for it). */
export function listLeakedKeys(db: Db, userId: string, since: Date) {
  return db
    .selectFrom('api_keys')
    .select(PUBLIC_COLUMNS)
    .where('user_id', '=', userId)
    .where('leak_reported_at', '>', since)
    .orderBy('leak_reported_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * Of the keys with these ids, those not revoked, with their expiry, however near or past (the streams' keys,
 * access/stream-keys.ts: an expired key's streams end as expired, not as revoked).
 */
export function findUnrevokedKeysById(db: Db, ids: readonly string[]) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'expires_at'])
    .where('id', 'in', [...ids])
    .where('is_revoked', '=', false)
    .execute();
}
