// `serve` runs the syncs every SYNC_INTERVAL. With several instances on one PostgreSQL, one runs each
// tick: the runner holds a session advisory lock for the whole run, and a run is only started when the
// last one (recorded in sync_state, on the database's clock) began at least half an interval ago.
import type { Logger } from 'pino';
import type { Config, SyncSettings } from '../../config.ts';
import type { Database, Db } from '../../db/index.ts';
import { announceDataChanged } from '../../changes/announce.ts';
import { syncGithub } from '../github/github.sync.ts';
import { syncOwasp } from '../owasp/owasp.sync.ts';
import { githubSummary, owaspSummary } from './summary.ts';
import type { SyncLog } from './sync-log.ts';
import { claimRun, SCHEDULER_LOCK, tryLock, unlock } from './sync-state.queries.ts';

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
}

export type After = (ms: number, task: () => void) => () => void;

const afterTimeout: After = (ms, task) => {
  const timer = setTimeout(task, ms).unref();
  return () => clearTimeout(timer);
};

const LAST_RUN = 'scheduler:last-run';

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

  async function runJobs(): Promise<void> {
    let changed = false;
    for (const job of jobs) {
      if (controller.signal.aborted) break;
      try {
        const result = await job.run({ db: database.db, signal: controller.signal, log: syncLog });
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
    if (running) return Promise.resolve('busy');
    running = withSchedulerLock(database, async () => {
      if (!(await claimRun(database.db, LAST_RUN, intervalMs / 2))) return 'not due' as const;
      await runJobs();
      return 'ran' as const;
    })
      .then((outcome) => outcome ?? 'busy')
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

// PGlite is one process's own database on one connection: there is no other instance to keep out, and
// holding its only connection for the run would stall every query the run makes.
async function withSchedulerLock<T>(database: Database, work: () => Promise<T>): Promise<T | undefined> {
  if (database.kind === 'pglite') return work();
  return database.db.connection().execute(async (connection) => {
    if (!(await tryLock(connection, SCHEDULER_LOCK))) return undefined;
    try {
      return await work();
    } finally {
      await unlock(connection, SCHEDULER_LOCK).catch(() => {});
    }
  });
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
