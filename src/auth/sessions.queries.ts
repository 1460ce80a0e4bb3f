// Server-side sessions. The cookie carries a random id; the database keeps only its SHA-256 digest.
import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { sha256Hex } from '../api-keys/api-keys.format.ts';

export interface SessionUser {
  id: string;
  login: string;
  name: string;
  avatar_url: string;
}

export async function startSession(db: Db, userId: string, ttlHours: number): Promise<{ id: string; expiresAt: Date }> {
  const id = crypto.randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + ttlHours * 3_600_000);
  await db
    .insertInto('sessions')
    .values({ digest: sha256Hex(id), user_id: userId, expires_at: expiresAt })
    .execute();
  return { id, expiresAt };
}

export async function findSessionUser(db: Db, sessionId: string): Promise<SessionUser | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return undefined;
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select(['users.id', 'users.login', 'users.name', 'users.avatar_url'])
    .where('sessions.digest', '=', sha256Hex(sessionId))
    .where('sessions.expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

export async function endSession(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('digest', '=', sha256Hex(sessionId)).execute();
}

export async function deleteExpiredSessions(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('sessions')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
