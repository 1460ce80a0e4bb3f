// The edge's purge queue, one worker per instance (server.ts starts it when EDGE_PURGE is set): it follows the change
// log with the cursor of migration 0016, claimed with a lease so that one instance purges each change, and purges the
// tags of each batch of changes (edge-tags.ts) through the configured edge (edge-purgers.ts). The cursor moves only
// after the edge said yes; a failure retries with backoff, for as long as it takes (the edge must never keep an answer
// because one call failed). Each range is purged a second time once every instance has heard of its data version
// (`settleMs`): an answer built from the old data while the first purge went out is gone then too.
import crypto from 'node:crypto';
import type { Db } from '../db/index.ts';
import { readChanges } from '../changes/change-log.queries.ts';
import type { PurgeMetrics } from '../metrics/purge-metrics.ts';
import type { Purger } from './edge-purgers.ts';
import { changeTags, EVERYTHING, uniqueTags } from './edge-tags.ts';
import {
  advancePurge,
  claimPurge,
  ensurePurgeRow,
  postponePurge,
  readPurgeBatch,
  releasePurge,
  requestPurge,
  type PurgeState,
} from './edge-purge.queries.ts';

/** The longest wait between two attempts, however many failed: the staleness bound once the edge is back. */
export const MAX_RETRY_DELAY_MS = 30_000;
/** Every instance reads the data version at least once a second (announcements/data-version.ts): twice, and some. */
export const SETTLE_MS = 2_500;

export interface EdgePurgeOptions {
  db: Db;
  purger: Purger;
  metrics: PurgeMetrics;
  log: { warn(object: object, message: string): void; info(object: object, message: string): void };
  /** The time of leases, retries and the delay metric (epoch ms; tests move it). */
  clock?: () => number;
  /** Calls back when the data changed (the app's data version watcher): a look at once. */
  watcher?: { onChange(listener: () => void): void };
  /** Before each purge: this instance hears the newest data version (its response cache is emptied first). */
  beforePurge?: () => Promise<void>;
  pollMs?: number;
  leaseMs?: number;
  /** Changes per batch. */
  batch?: number;
  settleMs?: number;
  retryMinMs?: number;
  /** 0 ≤ x < 1, for the jitter (tests fix it). */
  random?: () => number;
}

export interface EdgePurge {
  /** Looks for work now (tests call it after moving the clock). */
  kick(): void;
  /** Resolves once a look found nothing due that it could do. */
  idle(): Promise<void>;
  /** Asks for these tags to be purged too (once, by whichever instance purges next). */
  request(tags: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

export function retryDelay(attempt: number, minMs: number, random: () => number): number {
  const base = Math.min(MAX_RETRY_DELAY_MS, minMs * 2 ** Math.min(20, attempt - 1));
  return Math.round(base * (1 + random() / 2));
}

export function startEdgePurge(options: EdgePurgeOptions): EdgePurge {
  const { db, purger, metrics, log } = options;
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const leaseMs = options.leaseMs ?? 30_000;
  const batch = options.batch ?? 500;
  const settleMs = options.settleMs ?? SETTLE_MS;
  const retryMinMs = options.retryMinMs ?? 1_000;
  const owner = crypto.randomUUID();
  const controller = new AbortController();
  const label = { provider: purger.name };
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let made: Promise<void> | undefined;
  let idleWaiters: (() => void)[] = [];

  const now = () => new Date(clock());
  const lease = () => new Date(clock() + leaseMs);

  function schedule(ms: number) {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(look, Math.max(0, ms)).unref();
  }

  function look(): void {
    if (stopped) return;
    if (looking) {
      again = true;
      return;
    }
    let next = options.pollMs ?? 250;
    looking = (async () => {
      made ??= ensurePurgeRow(db).catch((error: unknown) => {
        made = undefined;
        throw error;
      });
      await made;
      const state = await claimPurge(db, owner, now(), leaseMs);
      if (!state) return;
      const wait = await work(state);
      if (wait !== undefined) next = Math.min(next, wait);
    })()
      .catch((error: unknown) => {
        if (!stopped) log.warn({ err: error }, 'edge purge: the queue cannot be read; trying again');
      })
      .finally(() => {
        looking = undefined;
        if (again) {
          again = false;
          look();
          return;
        }
        schedule(next);
        if (!again) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const resolve of waiters) resolve();
        }
      });
  }

  /** Sends the tags in the provider's batches; '*' alone stands for everything. */
  async function send(tags: readonly string[], failing: boolean): Promise<void> {
    const all = tags.includes(EVERYTHING) ? [EVERYTHING] : tags;
    for (let i = 0; i < all.length; i += purger.batch) {
      if (failing) metrics.retried.inc(label);
      try {
        await purger.purge(all.slice(i, i + purger.batch), controller.signal);
      } catch (error) {
        metrics.failed.inc(label);
        throw error;
      }
      metrics.sent.inc(label);
    }
  }

  /**
   * Purges what is due under the lease: the first pass of the changes after the cursor (and the tags asked for), then
   * a second pass whose time has come. Returns when to look again (a second pass not yet due), if sooner than a poll.
   */
  async function work(claimed: PurgeState): Promise<number | undefined> {
    let state = claimed;
    const failing = state.failed_attempts > 0;
    try {
      for (;;) {
        if (stopped) break;
        const { changes, upTo } = await readPurgeBatch(db, state.purged_through, batch);
        const full = changes.length === batch;
        const through = full ? changes.at(-1)!.id : Math.max(upTo, state.purged_through);
        const everything = state.baselines > state.baselines_seen ? [EVERYTHING] : [];
        const tags = uniqueTags([...everything, ...state.extra_tags, ...changes.flatMap(changeTags)]);
        if (tags.length === 0 && through === state.purged_through) break;
        if (tags.length > 0) {
          await options.beforePurge?.();
          await send(tags, failing);
        }
        const at = now();
        for (const change of changes)
          metrics.delay.observe(Math.max(0, at.getTime() - Date.parse(change.occurred_at)) / 1000);
        const settling = state.settle_upto > state.settled_through;
        const scheduled =
          settling || changes.length === 0
            ? {}
            : { settleUpto: through, settleDueAt: new Date(at.getTime() + settleMs) };
        const next: PurgeState = {
          ...state,
          purged_through: through,
          purged_at: at,
          extra_tags: [],
          baselines_seen: state.baselines,
          ...(scheduled.settleUpto !== undefined
            ? { settle_upto: scheduled.settleUpto, settle_due_at: scheduled.settleDueAt }
            : {}),
        };
        // The last step gives the lease back with it when no second pass is due now (one statement less).
        const release = !full && !settleDue(next);
        const progress = {
          purgedThrough: through,
          purgedAt: at,
          extraDone: state.extra_tags,
          baselinesSeen: state.baselines,
          release,
          ...scheduled,
        };
        if (!(await advancePurge(db, owner, progress, lease()))) return undefined;
        state = next;
        if (release) return settleWait(state);
        if (!full) break;
      }
      const wait = await settle(state, failing);
      await releasePurge(db, owner);
      return wait;
    } catch (error) {
      if (stopped) {
        await releasePurge(db, owner).catch(() => {});
        return undefined;
      }
      const attempt = state.failed_attempts + 1;
      const delay = retryDelay(attempt, retryMinMs, random);
      log.warn({ err: error, attempt, retryInMs: delay }, 'edge purge failed; retrying');
      await postponePurge(db, owner, now(), new Date(clock() + delay));
      return delay;
    }
  }

  const settleDue = (state: PurgeState) =>
    state.settle_upto > state.settled_through &&
    state.settle_due_at !== null &&
    state.settle_due_at.getTime() <= clock();
  /** How long until the second pass is due, if one is waiting. */
  const settleWait = (state: PurgeState) =>
    state.settle_upto > state.settled_through && state.settle_due_at
      ? Math.max(0, state.settle_due_at.getTime() - clock())
      : undefined;

  /** The second pass, when due; else how long until it is. */
  async function settle(state: PurgeState, failing: boolean): Promise<number | undefined> {
    let from = state.settled_through;
    const upto = state.settle_upto;
    if (upto <= from || !state.settle_due_at) return undefined;
    const dueIn = state.settle_due_at.getTime() - clock();
    if (dueIn > 0) return dueIn;
    while (from < upto && !stopped) {
      const changes = (await readChanges(db, { after: from }, batch)).filter((change) => change.id <= upto);
      const through = changes.length === batch ? changes.at(-1)!.id : upto;
      const tags = uniqueTags(changes.flatMap(changeTags));
      if (tags.length > 0) {
        await options.beforePurge?.();
        await send(tags, failing);
      }
      // Done: the next range is what the first pass purged since, due a settling time after its last purge.
      const next =
        through >= upto && state.purged_through > upto && state.purged_at
          ? {
              settleUpto: state.purged_through,
              settleDueAt: new Date(state.purged_at.getTime() + settleMs),
            }
          : {};
      if (!(await advancePurge(db, owner, { settledThrough: through, ...next }, lease()))) return undefined;
      from = through;
      if (next.settleDueAt) return Math.max(0, next.settleDueAt.getTime() - clock());
    }
    return undefined;
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
    request: (tags) => requestPurge(db, tags).then(() => look()),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
      await looking;
      for (const resolve of idleWaiters) resolve();
    },
  };
}
