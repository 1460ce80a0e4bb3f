// The rules of API keys: name and expiry checks, the active-key limit, revocation, authentication.
import type { Db } from '../db/index.ts';
import { generateApiKey, isWellFormedApiKey, sha256Hex } from './api-keys.format.ts';
import { findValidKeyByDigest, insertKeyWithinLimit } from './api-keys.queries.ts';
import { revokeKey, rotateKey } from '../announcements/announced-writes.ts';
import type { Announcer } from '../announcements/announce.ts';

export const MAX_ACTIVE_KEYS = 3;
export const MAX_NAME_LENGTH = 100;
/** The longest grace period of a rotation: a week, time enough to redeploy with the new key. */
export const MAX_GRACE_HOURS = 168;
/** Keys that expire within this time are flagged (`expiresSoon`, the key page). */
export const EXPIRES_SOON_MS = 7 * 86_400_000;

export const MESSAGES = {
  created: 'API key created successfully.',
  revoked: 'API key revoked successfully.',
  notFound: 'API key not found.',
  nameRequired: 'Name is required',
  nameTooLong: 'Name too long',
  invalidDate: 'Expiry date must be in future',
  limitReached: `You can have at most ${MAX_ACTIVE_KEYS} active API keys.`,
  rotated: 'API key rotated successfully.',
  rotatedEndingGrace:
    'API key rotated successfully. The key it had replaced, still in its grace period, stopped working: one key per rotation chain is in grace.',
  invalidGrace: `Grace period must be a whole number of hours from 0 to ${MAX_GRACE_HOURS}`,
  notActive: 'Only an active API key can be rotated.',
  alreadyRotated: 'This API key has already been rotated; rotate its replacement instead.',
} as const;

export type ResultCode =
  | 'SUCCESS'
  | 'INVALID_NAME'
  | 'INVALID_DATE'
  | 'LIMIT_REACHED'
  | 'NOT_FOUND'
  | 'INVALID_GRACE_PERIOD'
  | 'NOT_ACTIVE'
  | 'ALREADY_ROTATED';

export interface ApiKeyRecord {
  uuid: string;
  name: string;
  created_at: Date;
  expires_at: Date;
  is_revoked: boolean;
  last_used_at: Date | null;
  revoked_at: Date | null;
  /** Where GitHub's secret scanning found the key published, when it did. */
  leak_url: string | null;
  leak_reported_at: Date | null;
}

export type CreateResult =
  | { ok: true; code: 'SUCCESS'; message: string; rawKey: string; apiKey: ApiKeyRecord }
  | { ok: false; code: ResultCode; message: string; rawKey: null; apiKey: null };

/** A rotation's answer; `endedGraceOf`: the uuid of the old key's predecessor whose grace period it ended, if any. */
export type RotateResult =
  (Extract<CreateResult, { ok: true }> & { endedGraceOf: string | null }) | Extract<CreateResult, { ok: false }>;

const failure = (code: ResultCode, message: string): Extract<CreateResult, { ok: false }> => ({
  ok: false,
  code,
  message,
  rawKey: null,
  apiKey: null,
});

export async function createApiKey(
  db: Db,
  userId: string,
  rawName: string,
  expiresAt: Date,
  now = new Date(),
): Promise<CreateResult> {
  const name = rawName.trim();
  if (name.length === 0) return failure('INVALID_NAME', MESSAGES.nameRequired);
  if ([...name].length > MAX_NAME_LENGTH) return failure('INVALID_NAME', MESSAGES.nameTooLong);
  if (!(expiresAt.getTime() > now.getTime())) return failure('INVALID_DATE', MESSAGES.invalidDate);
  const { raw, digest } = generateApiKey();
  const apiKey = await insertKeyWithinLimit(db, { userId, name, digest, expiresAt }, MAX_ACTIVE_KEYS, now);
  if (!apiKey) return failure('LIMIT_REACHED', MESSAGES.limitReached);
  return { ok: true, code: 'SUCCESS', message: MESSAGES.created, rawKey: raw, apiKey };
}

/** Revokes one of the user's keys, then tells every instance (`announcer`: the server's or a command's). */
export async function revokeApiKey(db: Db, userId: string, uuid: string, announcer: Announcer) {
  // Someone else's key and an unknown uuid are the same answer, so uuids cannot be probed.
  if (!(await revokeKey(db, userId, uuid, announcer)))
    return { ok: false, code: 'NOT_FOUND' as const, message: MESSAGES.notFound };
  return { ok: true, code: 'SUCCESS' as const, message: MESSAGES.revoked };
}

/**
 * Replaces one of the user's active keys by a new one with the same name and expiry, shown once. The old key keeps
 * working for `graceHours` (0: revoked at once), then stops; every instance hears of it as of a revocation. Allowed
 * at the limit of active keys: the new key takes the old one's place. One key per rotation chain is in grace: rotating
 * a key whose predecessor still works revokes that predecessor (revocations.queries.ts, rotateKeyRow), so a user has
 * at most 3 active keys and 3 in grace. Someone else's key is NOT_FOUND, as revocation.
 */
export async function rotateApiKey(
  db: Db,
  userId: string,
  uuid: string,
  graceHours: number,
  announcer: Announcer,
  now = new Date(),
): Promise<RotateResult> {
  if (!Number.isInteger(graceHours) || graceHours < 0 || graceHours > MAX_GRACE_HOURS)
    return failure('INVALID_GRACE_PERIOD', MESSAGES.invalidGrace);
  const { raw, digest } = generateApiKey();
  const graceEndsAt = new Date(now.getTime() + graceHours * 3_600_000);
  const rotated = await rotateKey(db, { userId, uuid, digest, graceEndsAt, now }, announcer);
  switch (rotated.status) {
    case 'rotated': {
      const { key: apiKey, endedGraceOf } = rotated;
      const message = endedGraceOf ? MESSAGES.rotatedEndingGrace : MESSAGES.rotated;
      return { ok: true, code: 'SUCCESS', message, rawKey: raw, apiKey, endedGraceOf };
    }
    case 'not-found':
      return failure('NOT_FOUND', MESSAGES.notFound);
    case 'not-active':
      return failure('NOT_ACTIVE', MESSAGES.notActive);
    case 'already-rotated':
      return failure('ALREADY_ROTATED', MESSAGES.alreadyRotated);
  }
}

/** True when the key is valid at `now` and expires within EXPIRES_SOON_MS. */
export function expiresSoon(key: Pick<ApiKeyRecord, 'expires_at' | 'is_revoked'>, now: Date): boolean {
  const left = key.expires_at.getTime() - now.getTime();
  return !key.is_revoked && left > 0 && left <= EXPIRES_SOON_MS;
}

export interface KeyIdentity {
  keyId: string;
  userId: string;
  /** Sent back as API-Key-Expiration on every response the key authenticates. */
  expiresAt: Date;
}

/** Remembers keys found valid, by the raw key (held in memory only, like the request itself); times in epoch ms. */
export interface KeyCache {
  get(raw: string, now: number): KeyIdentity | undefined;
  /** Taken before the database is asked; `set` drops an answer older than the cache's last emptying. */
  readonly generation: number;
  set(raw: string, identity: KeyIdentity, expiresAt: Date, generation: number, now: number): void;
}

/** The identity behind a raw key, or null for a malformed, unknown, revoked or (at `now`) expired one. */
export async function authenticateApiKey(
  db: Db,
  raw: string,
  cache?: KeyCache,
  now = new Date(),
): Promise<KeyIdentity | null> {
  const cached = cache?.get(raw, now.getTime());
  if (cached) return cached;
  if (!isWellFormedApiKey(raw)) return null;
  const generation = cache?.generation ?? 0;
  const key = await findValidKeyByDigest(db, sha256Hex(raw), now);
  if (!key) return null;
  const identity = { keyId: key.id, userId: key.user_id, expiresAt: key.expires_at };
  cache?.set(raw, identity, key.expires_at, generation, now.getTime());
  return identity;
}
