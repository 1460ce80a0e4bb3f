// The rules of webhooks, for GraphQL and `cds webhooks`: what a webhook may subscribe to and where it may send, the
// per-user limit, the secret shown once, rotation with a day of overlap, replays.
import type { Db } from '../db/index.ts';
import type { WebhookSettings } from '../config.ts';
import { CHANGE_TYPES, RESOURCE_NAMES } from '../changes/change-log.ts';
import { generateSecret, SecretBox } from './webhook-secrets.ts';
import { checkTarget, parseTarget, systemLookup, TargetRefusedError, type Lookup } from './webhook-targets.ts';
import {
  changeIdsBetween,
  deleteWebhook as deleteRow,
  findWebhook,
  insertWebhookWithinLimit,
  listAttempts,
  rotateSecret,
  startReplay,
  type WebhookRecord,
} from './webhooks.queries.ts';

/** How long the secret a rotation replaces keeps signing. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
export const MAX_DESCRIPTION_LENGTH = 500;
export const MAX_SHOWN_DELIVERIES = 100;

export type WebhookErrorCode =
  | 'WEBHOOK_TARGET_REFUSED'
  | 'WEBHOOK_INVALID_INPUT'
  | 'WEBHOOK_LIMIT_REACHED'
  | 'WEBHOOK_NOT_FOUND'
  | 'WEBHOOKS_NOT_CONFIGURED';

/** A refusal with a message for the owner; nothing was changed. */
export class WebhookError extends Error {
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookError';
  }
}

export interface WebhookScope {
  db: Db;
  settings: WebhookSettings;
  now: Date;
  /** The resolver of target names (tests pass their own). */
  lookup?: Lookup;
}

export interface WebhookInput {
  url: string;
  resources?: readonly string[] | null;
  types?: readonly string[] | null;
  description?: string | null;
}

const UUID = /^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/i;

function box(settings: WebhookSettings): SecretBox {
  if (!settings.secretsKey)
    throw new WebhookError(
      'WEBHOOKS_NOT_CONFIGURED',
      'Webhooks are not enabled on this server: its operator has not set WEBHOOK_SECRETS_KEY.',
    );
  return new SecretBox(settings.secretsKey);
}

function oneOf(kind: string, values: readonly string[] | null | undefined, allowed: readonly string[]): string[] {
  const unknown = (values ?? []).filter((value) => !allowed.includes(value));
  if (unknown.length > 0)
    throw new WebhookError(
      'WEBHOOK_INVALID_INPUT',
      `Unknown ${kind} ${unknown.map((value) => JSON.stringify(value.slice(0, 100))).join(', ')}: allowed are ${allowed.join(', ')}.`,
    );
  return [...new Set(values ?? [])];
}

/** A target's URL checked as at every delivery: its form, then the addresses its host resolves to. */
export async function checkWebhookUrl(scope: WebhookScope, text: string): Promise<URL> {
  try {
    const url = parseTarget(text, scope.settings.allowPrivate);
    await checkTarget(url, scope.settings.allowPrivate, scope.lookup ?? systemLookup);
    return url;
  } catch (error) {
    if (error instanceof TargetRefusedError) throw new WebhookError(error.code, error.message);
    throw error;
  }
}

export async function createWebhook(scope: WebhookScope, userId: string, input: WebhookInput) {
  const sealer = box(scope.settings);
  const resources = oneOf('resource', input.resources, RESOURCE_NAMES);
  const types = oneOf('type', input.types, CHANGE_TYPES);
  const description = (input.description ?? '').trim();
  if ([...description].length > MAX_DESCRIPTION_LENGTH)
    throw new WebhookError(
      'WEBHOOK_INVALID_INPUT',
      `The description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`,
    );
  const url = await checkWebhookUrl(scope, input.url.trim());
  const secret = generateSecret();
  const webhook = await insertWebhookWithinLimit(
    scope.db,
    { userId, url: url.href, resources, types, description, sealed: sealer.seal(secret) },
    scope.settings.perUser,
    scope.now,
  );
  if (!webhook)
    throw new WebhookError('WEBHOOK_LIMIT_REACHED', `You can have at most ${scope.settings.perUser} webhooks.`);
  return { webhook, secret };
}

async function owned(scope: WebhookScope, uuid: string, userId: string | undefined) {
  const webhook = UUID.test(uuid) ? await findWebhook(scope.db, uuid.toLowerCase(), userId) : undefined;
  // Someone else's webhook and an unknown id are the same answer, so ids cannot be probed.
  if (!webhook) throw new WebhookError('WEBHOOK_NOT_FOUND', 'Webhook not found.');
  return webhook;
}

export async function deleteWebhook(scope: WebhookScope, userId: string | undefined, uuid: string): Promise<void> {
  if (!UUID.test(uuid) || !(await deleteRow(scope.db, uuid.toLowerCase(), userId)))
    throw new WebhookError('WEBHOOK_NOT_FOUND', 'Webhook not found.');
}

/** A new secret (shown once); the one it replaces keeps signing for ROTATION_OVERLAP_MS. */
export async function rotateWebhookSecret(scope: WebhookScope, userId: string, uuid: string) {
  const sealer = box(scope.settings);
  const found = await owned(scope, uuid, userId);
  const secret = generateSecret();
  const until = new Date(scope.now.getTime() + ROTATION_OVERLAP_MS);
  const webhook = await rotateSecret(scope.db, found.uuid, userId, sealer.seal(secret), until);
  if (!webhook) throw new WebhookError('WEBHOOK_NOT_FOUND', 'Webhook not found.');
  return { webhook, secret };
}

export interface ReplayRange {
  afterId?: number | null;
  untilId?: number | null;
  since?: Date | null;
  until?: Date | null;
}

const isId = (value: number | null | undefined) =>
  value === undefined || value === null || (Number.isSafeInteger(value) && value >= 0);

/**
 * Sends again the changes of a range (ids, or times) the endpoint had already; see startReplay. Without a start,
 * nothing is sent again: the endpoint is only enabled again, to go on from its last delivered change.
 */
export async function replayWebhook(
  scope: WebhookScope,
  userId: string | undefined,
  uuid: string,
  range: ReplayRange,
): Promise<WebhookRecord> {
  const byIds = range.afterId != null || range.untilId != null;
  const byTimes = range.since != null || range.until != null;
  if (byIds && byTimes)
    throw new WebhookError('WEBHOOK_INVALID_INPUT', 'A replay is given by change ids or by times, not both.');
  if (!isId(range.afterId) || !isId(range.untilId))
    throw new WebhookError('WEBHOOK_INVALID_INPUT', 'Change ids are whole numbers from 0.');
  for (const time of [range.since, range.until])
    if (time && Number.isNaN(time.getTime())) throw new WebhookError('WEBHOOK_INVALID_INPUT', 'A time is not valid.');
  const found = await owned(scope, uuid, userId);
  const bounds = byTimes
    ? await changeIdsBetween(scope.db, range.since ?? undefined, range.until ?? undefined)
    : {
        after: range.afterId ?? Number(found.delivered_through),
        until: range.untilId ?? Number(found.delivered_through),
      };
  if (bounds.until < bounds.after)
    throw new WebhookError('WEBHOOK_INVALID_INPUT', 'The end of the range is before its start.');
  const webhook = await startReplay(scope.db, found.uuid, userId, bounds.after, bounds.until);
  if (!webhook) throw new WebhookError('WEBHOOK_NOT_FOUND', 'Webhook not found.');
  return webhook;
}

export async function webhookDeliveries(scope: WebhookScope, userId: string, uuid: string, limit = 20) {
  const found = await owned(scope, uuid, userId);
  const count = Math.max(1, Math.min(MAX_SHOWN_DELIVERIES, Math.trunc(limit) || 20));
  return listAttempts(scope.db, found.id, count);
}

export { findWebhook, listWebhooks, type WebhookRecord } from './webhooks.queries.ts';
