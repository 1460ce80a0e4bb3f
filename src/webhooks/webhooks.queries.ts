// The webhooks' rows (migration 0015): their owners' management, and the delivery queue's claims and progress.
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

/** What an owner sees of a webhook (never a secret, sealed or not). */
export const PUBLIC_COLUMNS = [
  'webhooks.uuid',
  'webhooks.url',
  'webhooks.resources',
  'webhooks.types',
  'webhooks.description',
  'webhooks.created_at',
  'webhooks.delivered_through',
  'webhooks.replay_cursor',
  'webhooks.replay_until',
  'webhooks.next_attempt_at',
  'webhooks.failing_since',
  'webhooks.failed_attempts',
  'webhooks.disabled_at',
  'webhooks.disabled_reason',
  'webhooks.previous_secret_until',
] as const;

const lastChange = sql<string>`(SELECT coalesce(max(id), 0) FROM changes)`;

/** The webhooks of one user (or of everyone, for operators), oldest first, with the owner's login. */
export function listWebhooks(db: Db, userId?: string) {
  let query = db
    .selectFrom('webhooks')
    .innerJoin('users', 'users.id', 'webhooks.user_id')
    .select([...PUBLIC_COLUMNS, 'users.login'])
    .orderBy('webhooks.id');
  if (userId !== undefined) query = query.where('webhooks.user_id', '=', userId);
  return query.execute();
}

export type WebhookRecord = Awaited<ReturnType<typeof listWebhooks>>[number];

export function findWebhook(db: Db, uuid: string, userId?: string) {
  let query = db
    .selectFrom('webhooks')
    .innerJoin('users', 'users.id', 'webhooks.user_id')
    .select([...PUBLIC_COLUMNS, 'users.login', 'webhooks.id', 'webhooks.user_id', 'webhooks.secret_sealed'])
    .where('webhooks.uuid', '=', uuid);
  if (userId !== undefined) query = query.where('webhooks.user_id', '=', userId);
  return query.executeTakeFirst();
}

/**
 * Inserts a webhook unless its owner already has `limit`; the user's row is locked for the transaction, so that
 * concurrent creations are counted one after the other. It follows the changes committed from now on.
 */
export async function insertWebhookWithinLimit(
  db: Db,
  values: { userId: string; url: string; resources: string[]; types: string[]; description: string; sealed: string },
  limit: number,
  now: Date,
): Promise<WebhookRecord | undefined> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', values.userId).forUpdate().executeTakeFirstOrThrow();
    const { n } = await trx
      .selectFrom('webhooks')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('user_id', '=', values.userId)
      .executeTakeFirstOrThrow();
    if (n >= limit) return undefined;
    const { uuid } = await trx
      .insertInto('webhooks')
      .values({
        user_id: values.userId,
        url: values.url,
        resources: values.resources,
        types: values.types,
        description: values.description,
        secret_sealed: values.sealed,
        created_at: now,
        delivered_through: lastChange,
      })
      .returning('uuid')
      .executeTakeFirstOrThrow();
    return findWebhook(trx, uuid);
  });
}

export async function deleteWebhook(db: Db, uuid: string, userId?: string): Promise<boolean> {
  let query = db.deleteFrom('webhooks').where('uuid', '=', uuid);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  return (await query.executeTakeFirst()).numDeletedRows > 0n;
}

/** The new secret signs from now on; the current one too until `previousUntil`. */
export async function rotateSecret(db: Db, uuid: string, userId: string, sealed: string, previousUntil: Date) {
  const row = await db
    .updateTable('webhooks')
    .set({
      previous_secret_sealed: sql`secret_sealed`,
      previous_secret_until: previousUntil,
      secret_sealed: sealed,
    })
    .where('uuid', '=', uuid)
    .where('user_id', '=', userId)
    .returning('uuid')
    .executeTakeFirst();
  return row ? findWebhook(db, uuid) : undefined;
}

/**
 * Sends again the changes after `after` up to `until` that the endpoint already had (the live cursor sends the rest),
 * before the live ones; merged with a replay still under way. Enables a disabled endpoint again: a replay is what its
 * owner asks for once the receiver is fixed.
 */
export async function startReplay(db: Db, uuid: string, userId: string | undefined, after: number, until: number) {
  let query = db
    .updateTable('webhooks')
    .set({
      replay_cursor: sql`CASE WHEN least(${until}::bigint, delivered_through) > ${after}::bigint
        THEN least(coalesce(replay_cursor, ${after}::bigint), ${after}::bigint) ELSE replay_cursor END`,
      replay_until: sql`CASE WHEN least(${until}::bigint, delivered_through) > ${after}::bigint
        THEN greatest(coalesce(replay_until, 0), least(${until}::bigint, delivered_through)) ELSE replay_until END`,
      disabled_at: null,
      disabled_reason: null,
      failed_attempts: 0,
      failing_since: null,
      next_attempt_at: null,
    })
    .where('uuid', '=', uuid);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  const row = await query.returning('uuid').executeTakeFirst();
  return row ? findWebhook(db, uuid) : undefined;
}

/** The change ids that bound a replay given by times: after the last change before `since`, up to `until`. */
export async function changeIdsBetween(db: Db, since: Date | undefined, until: Date | undefined) {
  const { rows } = await sql<{ after: string; until: string }>`
    SELECT (SELECT coalesce(max(id), 0) FROM changes WHERE ${since ?? null}::timestamptz IS NOT NULL
              AND occurred_at < ${since ?? null}::timestamptz) AS after,
           (SELECT coalesce(max(id), 0) FROM changes
             WHERE ${until ?? null}::timestamptz IS NULL OR occurred_at <= ${until ?? null}::timestamptz) AS until`.execute(
    db,
  );
  return { after: Number(rows[0]?.after ?? 0), until: Number(rows[0]?.until ?? 0) };
}

/** The last attempts of a webhook's deliveries, newest first. */
export function listAttempts(db: Db, webhookId: string, limit: number) {
  return db
    .selectFrom('webhook_attempts')
    .select(['change_id', 'status', 'response_code', 'response_body', 'error', 'attempted_at', 'next_attempt_at'])
    .where('webhook_id', '=', webhookId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
