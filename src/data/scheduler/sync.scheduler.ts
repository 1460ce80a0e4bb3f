// `serve` runs the syncs every SYNC_INTERVAL. With several instances on one PostgreSQL, one runs each
// tick: the runner holds a lease (a row of sync_state with an expiry, renewed while the run lasts) for the
// whole run, and a run is only started when the last one (recorded in sync_state, on the database's clock)
// began at least half an interval ago. Not a session lock: through a pooler in transaction mode its lock and
// unlock statements may run in different sessions, and the lock then outlives its holder (issue 29).
import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Config, SyncSettings } from '../../config.ts';
import type { Database, Db } from '../../db/index.ts';
import { announceDataChanged } from '../../announcements/announce.ts';
import { syncGithub } from '../sync/github/github.sync.ts';
import { syncOwasp } from '../sync/owasp/owasp.sync.ts';
import { githubSummary, owaspSummary } from '../sync/sync.summary.ts';
import type { SyncLog } from '../base/sync-log.ts';
import { claimRun, releaseLease, takeLease, type Lease } from '../base/sync-state.queries.ts';

export interface SyncJob {
  name: string;
  run(context: {
    db: Db;
    signal: AbortSignal;
    log: SyncLog;
  }): Promise<{ changed: boolean; dataVersion: number; summary: string }>;
}

/** `not due`: another instance (or this one) ran less than half an interval ago; `busy`: one is running. */
export type TickOutcome = 'ran' | 'not due' | 'busy' | 'stopped';

export interface SyncScheduler {
  /** Runs the syncs now if this instance may; the timer calls it every interval. */
  tick(): Promise<TickOutcome>;
  /** Stops the timer, aborts a run in progress (it ends at a unit boundary) and waits for it. */
  stop(): Promise<void>;
}

export interface SchedulerOptions {
  database: Database;
  config: Config;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  settings?: SyncSettings;
  /** The syncs to run; by default those the settings name (GitHub first: leaders link to its members). */
  jobs?: SyncJob[];
  /** Delay of the first tick after start. */
  firstTickMs?: number;
  /** The timer of the ticks: calls `task` once after `ms`, unless cancelled first (tests fire it by hand). */
  after?: After;
  /** How long the lease of a run lasts unless renewed (a third of it later, while the run lasts); default 60 s. */
  leaseMs?: number;
}

export type After = (ms: number, task: () => void) => () => void;

const afterTimeout: After = (ms, task) => {
  const timer = setTimeout(task, ms).unref();
  return () => clearTimeout(timer);
};

const LAST_RUN = 'scheduler:last-run';
/** The key of the runner's lease in sync_state. */
export const SCHEDULER_LEASE = 'scheduler:lease';
const LEASE_MS = 60_000;

/** Undefined when SYNC_INTERVAL is unset or there is nothing to sync. */
export function startSyncScheduler(options: SchedulerOptions): SyncScheduler | undefined {
  const { database, config, log } = options;
  const settings = options.settings ?? config.sync;
  const intervalMs = settings.intervalMs;
  if (!intervalMs) return undefined;
  const jobs = options.jobs ?? defaultJobs(config, settings);
  if (jobs.length === 0) {
    log.warn('SYNC_INTERVAL is set, but SYNC_GITHUB_ORGS and SYNC_OWASP_FROM are empty: nothing to sync');
    return undefined;
  }
  const controller = new AbortController();
  const syncLog: SyncLog = { info: (message) => log.info(message), warn: (message) => log.warn(message) };
  let stopped = false;
  let running: Promise<TickOutcome> | undefined;
  let cancelTimer = () => {};
  const after = options.after ?? afterTimeout;
  // (Random: two schedulers of one process, the tests', are two holders.)
  const holder = `${os.hostname()} pid ${process.pid} ${crypto.randomBytes(3).toString('hex')}`;
  const lease = { holder, ms: options.leaseMs ?? LEASE_MS };

  async function runJobs(signal: AbortSignal): Promise<void> {
    let changed = false;
    for (const job of jobs) {
      if (signal.aborted) break;
      try {
        const result = await job.run({ db: database.db, signal, log: syncLog });
        log.info({ sync: job.name, changed: result.changed }, result.summary);
        if (result.changed) changed = true;
      } catch (error) {
        log.error({ sync: job.name, err: error }, `${job.name} sync failed; the next tick resumes it`);
      }
    }
    if (changed) await announceDataChanged(config);
  }

  const tick = (): Promise<TickOutcome> => {
    if (stopped) return Promise.resolve('stopped');
    if (running) {
      log.info({ tick: 'busy' }, 'sync tick: busy, the run this instance started is still going');
      return Promise.resolve('busy');
    }
    const started = performance.now();
    running = withSchedulerLease(database, lease, log, controller.signal, async (signal) => {
      if (!(await claimRun(database.db, LAST_RUN, intervalMs / 2))) return 'not due' as const;
      await runJobs(signal);
      return 'ran' as const;
    })
      .then(({ outcome, heldBy }) => {
        const durationMs = Math.round(performance.now() - started);
        if (outcome === 'ran') log.info({ tick: outcome, durationMs }, 'sync tick: ran the syncs');
        else if (outcome === 'not due')
          log.info({ tick: outcome }, 'sync tick: not due, the last run began less than half an interval ago');
        else {
          const held = heldBy ? `lease held by ${heldBy.holder} until ${heldBy.until}` : 'lease taken just now';
          log.info({ tick: outcome, ...heldBy }, `sync tick: busy, another instance is running the syncs (${held})`);
        }
        return outcome;
      })
      .finally(() => (running = undefined));
    return running;
  };

  const schedule = (delay: number) => {
    cancelTimer = after(delay, () => {
      tick()
        .catch((error: unknown) => log.error({ err: error }, 'scheduled sync could not start'))
        .finally(() => {
          if (!stopped) schedule(intervalMs);
        });
    });
  };
  schedule(options.firstTickMs ?? 10_000);
  log.info({ intervalMs, syncs: jobs.map((job) => job.name) }, 'scheduled sync on');

  return {
    tick,
    async stop() {
      stopped = true;
      cancelTimer();
      controller.abort();
      await running?.catch(() => {});
    },
  };
}

/**
 * Runs `work` while this instance holds the scheduler's lease: taken (or refused: `busy`, with the lease that
 * refused it), renewed every third of its term while `work` runs, released at the end. A renewal that finds the lease
 * taken by another instance (this one stalled past its term) aborts the run at its next unit boundary; one that
 * fails (the database unreachable) is retried at the next renewal.
 * PGlite is one process's own database on one connection: there is no other instance to keep out, and
 * renewals would wait behind the run's transactions for the only connection.
 */
async function withSchedulerLease(
  database: Database,
  lease: { holder: string; ms: number },
  log: Pick<Logger, 'warn'>,
  stop: AbortSignal,
  work: (signal: AbortSignal) => Promise<'ran' | 'not due'>,
): Promise<{ outcome: TickOutcome; heldBy?: Lease | undefined }> {
  if (database.kind === 'pglite') return { outcome: await work(stop) };
  const { db } = database;
  const first = await takeLease(db, SCHEDULER_LEASE, lease.holder, lease.ms);
  if (!first.taken) return { outcome: 'busy', heldBy: first.lease };
  const lost = new AbortController();
  const renew = async () => {
    try {
      const again = await takeLease(db, SCHEDULER_LEASE, lease.holder, lease.ms);
      if (again.taken || lost.signal.aborted) return;
      log.warn({ holder: again.lease?.holder }, 'sync lease lost to another instance: this run stops');
      lost.abort();
    } catch (error) {
      log.warn({ err: error }, 'sync lease could not be renewed; trying again');
    }
  };
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = renewing.then(renew);
    },
    Math.max(1, Math.floor(lease.ms / 3)),
  );
  timer.unref();
  try {
    return { outcome: await work(AbortSignal.any([stop, lost.signal])) };
  } finally {
    clearInterval(timer);
    await renewing;
    await releaseLease(db, SCHEDULER_LEASE, lease.holder).catch((error: unknown) =>
      log.warn({ err: error }, 'sync lease could not be released; it expires by itself'),
    );
  }
}

function defaultJobs(config: Config, settings: SyncSettings): SyncJob[] {
  const jobs: SyncJob[] = [];
  if (settings.githubOrgs.length > 0) {
    jobs.push({
      name: 'github',
      async run({ db, signal, log }) {
        const report = await syncGithub(db, {
          apiUrl: config.github.apiUrl,
          token: config.github.token,
          organizations: settings.githubOrgs,
          signal,
          log,
          requestsPerMinute: settings.githubRequestsPerMinute,
        });
        return { changed: report.changed, dataVersion: report.dataVersion, summary: githubSummary(report) };
      },
    });
  }
  const from = settings.owaspFrom;
  if (from) {
    jobs.push({
      name: 'owasp',
      async run({ db, signal }) {
        const report = await syncOwasp(db, { from, signal });
        return { changed: report.changed, dataVersion: report.dataVersion, summary: owaspSummary(report) };
      },
    });
  }
  return jobs;
}
