// Retention of the change log (CHANGES_RETENTION_DAYS, docs/changes.md): every PRUNE_INTERVAL_MS the changes older than
// the retention are removed (pruneChanges; the last change always stays). Every instance prunes: the deletions of two
// at once only wait for each other. A reader asking before what is kept gets 410 (api/v0/changes/). A pruning that
// removed changes moves the data version, so that no instance answers from its response cache a page that shows them
// (or a 200 where the feed now answers 410).
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import { bumpDataVersion } from '../announcements/counters.queries.ts';
import { pruneChanges } from './change-log.queries.ts';

export const PRUNE_INTERVAL_MS = 60 * 60_000;

export interface ChangePruning {
  /** Stops the timer and waits for a pruning under way. */
  stop(): Promise<void>;
}

export function scheduleChangePruning({
  db,
  days,
  now,
  every,
  log,
}: {
  db: Db;
  days: number;
  /** The time, in epoch milliseconds (tests move it). */
  now: () => number;
  /** Runs the task every interval until the function it returns is called (tests run it by hand). */
  every: (intervalMs: number, task: () => Promise<void>) => () => void;
  log: FastifyBaseLogger;
}): ChangePruning {
  let pruning: Promise<void> | undefined;
  const prune = (): Promise<void> =>
    (pruning ??= pruneChanges(db, days, new Date(now()))
      .then(async (removed) => {
        if (removed === 0) return;
        await bumpDataVersion(db);
        log.info({ removed, retentionDays: days }, 'old changes removed from the change log');
      })
      .catch((error: unknown) => log.warn({ err: error }, 'old changes not removed; the next pruning tries again'))
      .finally(() => (pruning = undefined)));
  const stopTimer = every(PRUNE_INTERVAL_MS, prune);
  return {
    async stop() {
      stopTimer();
      await pruning;
    },
  };
}
