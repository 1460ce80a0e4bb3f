// The delivery queue's worker, one per instance (server.ts starts it): it claims endpoints with changes to send
// (webhook-queue.queries.ts), sends each endpoint's changes in id order as Standard Webhooks messages, and on a failure
// puts the endpoint off with exponential backoff and jitter, then disables it after WEBHOOK_RETRY_MAX_HOURS (a 410 at
// once). Endpoints are served concurrently: a slow or failing one holds only its own turn. Progress is written after
// each message, so a restart or a crash sends again at most the message that was in flight (at least once).
import crypto from 'node:crypto';
import type { Db } from '../db/index.ts';
import type { WebhookSettings } from '../config.ts';
import { lastChangeId, readChanges } from '../changes/change-log.queries.ts';
import type { Change, LoggedResource } from '../changes/change-log.ts';
import { SecretBox } from './webhook-secrets.ts';
import { checkTarget, parseTarget, systemLookup, TargetRefusedError, type Lookup } from './webhook-targets.ts';
import { ATTEMPT_TIMEOUT_MS, postMessage, type PostOutcome } from './webhook-client.ts';
import { buildMessage } from './webhook-message.ts';
import {
  advance,
  advanceReplay,
  claimDue,
  disable,
  postpone,
  recordAttempt,
  release,
  type ClaimedWebhook,
} from './webhook-queue.queries.ts';

/** A message that cannot be signed (its secret cannot be opened): a failed attempt. */
class UnsignableError extends Error {}

/** The longest wait between two attempts, however many failed. */
export const MAX_RETRY_DELAY_MS = 3_600_000;

export interface WebhookDeliveriesOptions {
  db: Db;
  settings: WebhookSettings;
  /** The time of retries and leases (epoch ms; tests move it). Signatures are stamped with the real time. */
  clock?: () => number;
  lookup?: Lookup;
  log: { warn(object: object, message: string): void; error(object: object, message: string): void };
  /** Something that calls back when the data changed (the app's data version watcher): a look at once. */
  watcher?: { onChange(listener: () => void): void };
  /** Between two looks for due endpoints. */
  pollMs?: number;
  /** Endpoints served at once by this instance. */
  concurrency?: number;
  leaseMs?: number;
  /** Changes read at once for one endpoint. */
  batch?: number;
  timeoutMs?: number;
  /** 0 ≤ x < 1, for the jitter (tests fix it). */
  random?: () => number;
}

export interface WebhookDeliveries {
  /** Looks for due endpoints now (tests call it after moving the clock). */
  kick(): void;
  /** Resolves once no endpoint is being served and a look found none due. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** The delay before retry `attempt` (1, 2, …): doubling from the minimum, at most an hour, plus up to half of it. */
export function retryDelay(attempt: number, minMs: number, random: () => number): number {
  const base = Math.min(MAX_RETRY_DELAY_MS, minMs * 2 ** Math.min(30, attempt - 1));
  return Math.round(base + (random() * base) / 2);
}

export function startWebhookDeliveries(options: WebhookDeliveriesOptions): WebhookDeliveries {
  const { db, settings, log } = options;
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const lookup = options.lookup ?? systemLookup;
  const leaseMs = options.leaseMs ?? 60_000;
  const batch = options.batch ?? 100;
  const concurrency = options.concurrency ?? 16;
  const owner = crypto.randomUUID();
  const box = settings.secretsKey ? new SecretBox(settings.secretsKey) : undefined;
  const serving = new Map<string, Promise<void>>();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<number> | undefined;
  let again = false;
  let stopped = false;
  let idleWaiters: (() => void)[] = [];

  const now = () => new Date(clock());
  const lease = () => new Date(clock() + leaseMs);

  function schedule(ms: number) {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(look, ms).unref();
  }

  function settleIdle() {
    if (looking || again || serving.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function look(): void {
    if (stopped) return;
    if (looking) {
      again = true;
      return;
    }
    looking = claimDue(db, owner, now(), leaseMs, concurrency - serving.size)
      .then((claimed) => {
        for (const webhook of claimed) {
          const run = serve(webhook).then(
            () => {
              serving.delete(webhook.id);
              look();
            },
            async (error: unknown) => {
              // Not a failure of the endpoint (the database, a bug): the next poll tries again, not at once.
              log.warn({ err: error, webhook: webhook.uuid }, 'webhook deliveries failed; trying again later');
              await release(db, webhook.id, owner).catch(() => {});
              serving.delete(webhook.id);
              settleIdle();
            },
          );
          serving.set(webhook.id, run);
        }
        return claimed.length;
      })
      .catch((error: unknown) => {
        if (!stopped) log.warn({ err: error }, 'webhook deliveries: the queue cannot be read; trying again');
        return 0;
      })
      .finally(() => {
        looking = undefined;
        if (again) {
          again = false;
          look();
        } else {
          schedule(options.pollMs ?? 1_000);
          settleIdle();
        }
      });
  }

  /**
   * The secrets that sign now: the current one, and the one a rotation replaced during its overlap (when it can be
   * opened). A current one that cannot be (no WEBHOOK_SECRETS_KEY, or another) fails the attempt like an endpoint's
   * failure: retried, then disabled, never a loop.
   */
  function secretsOf(webhook: ClaimedWebhook): string[] {
    if (!box) throw new UnsignableError('WEBHOOK_SECRETS_KEY is not set: the message cannot be signed');
    let current: string;
    try {
      current = box.open(webhook.secret_sealed);
    } catch (error) {
      throw new UnsignableError((error as Error).message);
    }
    const secrets = [current];
    if (webhook.previous_secret_sealed && webhook.previous_secret_until && webhook.previous_secret_until > now()) {
      try {
        secrets.push(box.open(webhook.previous_secret_sealed));
      } catch {
        // The previous secret only adds a signature: without it the message is still signed.
      }
    }
    return secrets;
  }

  /** Sends the endpoint's changes in order until none is left, one fails, or the lease is lost. */
  async function serve(webhook: ClaimedWebhook): Promise<void> {
    const filter = {
      resources: webhook.resources as LoggedResource[],
      types: webhook.types,
    };
    let replay = webhook.replay_cursor === null ? undefined : Number(webhook.replay_cursor);
    const replayUntil = Number(webhook.replay_until ?? 0);
    let live = Number(webhook.delivered_through);
    for (;;) {
      if (stopped) return release(db, webhook.id, owner);
      if (replay !== undefined) {
        const changes = (await readChanges(db, { ...filter, after: replay }, batch)).filter(
          (change) => change.id <= replayUntil,
        );
        if (changes.length === 0) {
          if (!(await advanceReplay(db, webhook.id, owner, replay, replayUntil, lease())))
            return release(db, webhook.id, owner);
          replay = undefined;
          continue;
        }
        for (const change of changes) {
          if (!(await send(webhook, change))) return;
          if (!(await advanceReplay(db, webhook.id, owner, replay, change.id, lease())))
            return release(db, webhook.id, owner);
          replay = change.id;
        }
        if (replay >= replayUntil) replay = undefined;
        continue;
      }
      // Read before the changes: every change up to it is in the page, or after the page's last.
      const upTo = await lastChangeId(db);
      const changes = await readChanges(db, { ...filter, after: live }, batch);
      for (const change of changes) {
        if (!(await send(webhook, change))) return;
        if (!(await advance(db, webhook.id, owner, change.id, lease()))) return;
        live = change.id;
      }
      if (changes.length === batch) continue;
      if (upTo > live && !(await advance(db, webhook.id, owner, upTo, lease()))) return;
      return release(db, webhook.id, owner);
    }
  }

  /** One attempt of one message; true when delivered. A failure postpones or disables the endpoint. */
  async function send(webhook: ClaimedWebhook, change: Change): Promise<boolean> {
    if (stopped) {
      await release(db, webhook.id, owner);
      return false;
    }
    const attemptedAt = now();
    let outcome: PostOutcome;
    let refused: string | undefined;
    try {
      const url = parseTarget(webhook.url, settings.allowPrivate);
      const target = await checkTarget(url, settings.allowPrivate, lookup);
      const message = buildMessage(webhook.uuid, change, secretsOf(webhook), Math.floor(Date.now() / 1000));
      const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
      outcome = await postMessage(url, target, message.headers, message.body, timeoutMs, controller.signal);
    } catch (error) {
      if (error instanceof UnsignableError) outcome = { error: error.message };
      else if (error instanceof TargetRefusedError) {
        refused = error.message;
        outcome = { error: refused };
      } else throw error;
    }
    const base = { webhookId: webhook.id, changeId: change.id, attemptedAt };
    const status = outcome.status;
    if (status !== undefined && status >= 200 && status < 300) {
      await recordAttempt(db, { ...base, status: 'delivered', responseCode: status, responseBody: outcome.body });
      return true;
    }
    if (stopped) {
      // Cut short by the stop: not the endpoint's failure. The lease goes back, so that the next instance (or this
      // one restarted) sends the message again at once.
      await release(db, webhook.id, owner);
      return false;
    }
    const detail = status === undefined ? outcome.error : `HTTP ${status}`;
    if (status === 410) {
      await recordAttempt(db, { ...base, status: 'failed', responseCode: status, responseBody: outcome.body });
      await disable(db, webhook.id, owner, attemptedAt, 'The endpoint answered 410 Gone: disabled at once.');
      return false;
    }
    const failingSince = webhook.failing_since ?? attemptedAt;
    const attempt = webhook.failed_attempts + 1;
    const nextAttemptAt = new Date(attemptedAt.getTime() + retryDelay(attempt, settings.retryMinMs, random));
    const givingUp = nextAttemptAt.getTime() - failingSince.getTime() > settings.retryMaxHours * 3_600_000;
    await recordAttempt(db, {
      ...base,
      status: refused ? 'refused' : 'failed',
      responseCode: status,
      responseBody: outcome.body,
      error: outcome.error,
      nextAttemptAt: givingUp ? undefined : nextAttemptAt,
    });
    if (givingUp)
      await disable(
        db,
        webhook.id,
        owner,
        attemptedAt,
        `Deliveries failed for ${settings.retryMaxHours} hours since ${failingSince.toISOString()} (${attempt} attempts; the last: ${detail}): disabled. Replay once the endpoint works again.`,
      );
    else await postpone(db, webhook.id, owner, attemptedAt, nextAttemptAt);
    return false;
  }

  options.watcher?.onChange(() => look());
  schedule(0);

  return {
    kick: () => look(),
    idle() {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        look();
      });
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
      await looking;
      await Promise.all(serving.values());
      for (const resolve of idleWaiters) resolve();
    },
  };
}
