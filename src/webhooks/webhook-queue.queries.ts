// The delivery queue (migration 0015): an endpoint with changes to send is claimed by one instance at a time with a
// lease (one short UPDATE, FOR UPDATE SKIP LOCKED: no session lock, so it works through PgBouncer in transaction
// mode); every step of its progress is written only while the lease is still this instance's.
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

export interface ClaimedWebhook {
  id: string;
  uuid: string;
  url: string;
  resources: string[];
  types: string[];
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: Date | null;
  delivered_through: string;
  replay_cursor: string | null;
  replay_until: string | null;
  failing_since: Date | null;
  failed_attempts: number;
}

/** Takes the lease of up to `limit` endpoints due at `now` with changes to send, skipping those another holds. */
export async function claimDue(
  db: Db,
  owner: string,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<ClaimedWebhook[]> {
  if (limit <= 0) return [];
  const { rows } = await sql<ClaimedWebhook>`
    UPDATE webhooks SET lease_owner = ${owner}, lease_until = ${new Date(now.getTime() + leaseMs)}
    WHERE id IN (
      SELECT id FROM webhooks
      WHERE disabled_at IS NULL
        AND (lease_until IS NULL OR lease_until < ${now})
        AND (next_attempt_at IS NULL OR next_attempt_at <= ${now})
        AND (replay_cursor IS NOT NULL OR delivered_through < (SELECT coalesce(max(id), 0) FROM changes))
      ORDER BY next_attempt_at NULLS FIRST, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING id, uuid, url, resources, types, secret_sealed, previous_secret_sealed, previous_secret_until,
      delivered_through, replay_cursor, replay_until, failing_since, failed_attempts`.execute(db);
  return rows;
}

/** Whether the lease is still this owner's (false: the endpoint was deleted, or its lease expired and was taken). */
const held = (db: Db, id: string, owner: string) =>
  db.updateTable('webhooks').where('id', '=', id).where('lease_owner', '=', owner);

/** The live cursor moves to `through` (a success ends a failing run); the lease is renewed. */
export async function advance(db: Db, id: string, owner: string, through: number, leaseUntil: Date) {
  const result = await held(db, id, owner)
    .set({
      delivered_through: sql`greatest(delivered_through, ${through}::bigint)`,
      failed_attempts: 0,
      failing_since: null,
      next_attempt_at: null,
      lease_until: leaseUntil,
    })
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * A replay's cursor moves from `from` to `through`; past its end the replay is over. False when the lease is lost, or
 * when a replay asked meanwhile moved the cursor (merged ranges): the next claim reads the row again.
 */
export async function advanceReplay(
  db: Db,
  id: string,
  owner: string,
  from: number,
  through: number,
  leaseUntil: Date,
) {
  const result = await held(db, id, owner)
    .where('replay_cursor', '=', String(from))
    .set({
      replay_cursor: sql`CASE WHEN ${through}::bigint >= replay_until THEN NULL ELSE ${through}::bigint END`,
      replay_until: sql`CASE WHEN ${through}::bigint >= replay_until THEN NULL ELSE replay_until END`,
      failed_attempts: 0,
      failing_since: null,
      next_attempt_at: null,
      lease_until: leaseUntil,
    })
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A failed attempt: the next one at `nextAttemptAt`, the lease given back. */
export async function postpone(db: Db, id: string, owner: string, now: Date, nextAttemptAt: Date) {
  await held(db, id, owner)
    .set({
      next_attempt_at: nextAttemptAt,
      failing_since: sql`coalesce(failing_since, ${now}::timestamptz)`,
      failed_attempts: sql`failed_attempts + 1`,
      lease_owner: null,
      lease_until: null,
    })
    .execute();
}

export async function disable(db: Db, id: string, owner: string, now: Date, reason: string) {
  await held(db, id, owner)
    .set({
      disabled_at: now,
      disabled_reason: reason.slice(0, 1000),
      next_attempt_at: null,
      lease_owner: null,
      lease_until: null,
    })
    .execute();
}

export async function release(db: Db, id: string, owner: string) {
  await held(db, id, owner).set({ lease_owner: null, lease_until: null }).execute();
}

/** How many attempts each webhook keeps (webhookDeliveries shows the last ones). */
export const KEPT_ATTEMPTS = 200;

export interface Attempt {
  webhookId: string;
  changeId: number;
  status: 'delivered' | 'failed' | 'refused';
  responseCode?: number | undefined;
  responseBody?: string | undefined;
  error?: string | undefined;
  attemptedAt: Date;
  nextAttemptAt?: Date | undefined;
}

export async function recordAttempt(db: Db, attempt: Attempt): Promise<void> {
  const { id } = await db
    .insertInto('webhook_attempts')
    .values({
      webhook_id: attempt.webhookId,
      change_id: attempt.changeId,
      status: attempt.status,
      response_code: attempt.responseCode ?? null,
      response_body: attempt.responseBody ?? null,
      error: attempt.error?.slice(0, 500) ?? null,
      attempted_at: attempt.attemptedAt,
      next_attempt_at: attempt.nextAttemptAt ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  // Bounded: now and then (one insert in a hundred) what is past this webhook's last KEPT_ATTEMPTS goes.
  if (Number(id) % 100 === 0)
    await sql`
      DELETE FROM webhook_attempts WHERE webhook_id = ${attempt.webhookId} AND id <= (
        SELECT id FROM webhook_attempts WHERE webhook_id = ${attempt.webhookId}
        ORDER BY id DESC OFFSET ${KEPT_ATTEMPTS} LIMIT 1)`.execute(db);
}
