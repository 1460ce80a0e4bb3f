// `cds sync github`: mirrors organizations from the GitHub API, one organization and then one repository
// per transaction, with conditional requests so that an unchanged repository costs only 304s.
import type { Db } from '../../../db/index.ts';
import { ImportError } from '../../base/import-error.ts';
import { readDataVersion } from '../../../announcements/counters.queries.ts';
import { emptyCounts } from '../../base/resource-counts.ts';
import { GITHUB_RESOURCES, type RepositoryRecord } from '../../github/github.records.ts';
import type { GithubReport } from '../../github/github.write.ts';
import { createGithubClient, type GithubClientOptions, type RequestStats } from './github.client.ts';
import type { BatchResult } from './github.batch.ts';
import { syncOrganization, syncRepository, type UnitContext } from './github.units.ts';
import { PROFILE_REQUESTS, syncProfiles, type ProfileReport } from './github.profiles.ts';
import { NO_PROGRESS, QUIET_LOG, type SyncLog, type SyncProgress } from '../../base/sync-log.ts';
import { refreshSnapshots } from '../../snapshots/snapshots.rebuild.ts';
import { refreshHealth, type HealthReport } from '../../health/health.refresh.ts';

export interface GithubSyncOptions extends Omit<GithubClientOptions, 'log'> {
  organizations: readonly string[];
  /** Records per page (GitHub allows up to 100). */
  perPage?: number;
  /** Repositories worked on at the same time (their requests still go through the client's request gate). */
  concurrency?: number;
  /** At most this many profile requests (`GET /users/…`, `GET /orgs/…`) per run; default 100. */
  profileRequests?: number;
  /** Fetch commits_count and contributors_count of repositories pushed since the last run (default true). */
  repositoryCounts?: boolean;
  log?: SyncLog;
  progress?: SyncProgress;
  /** The clock that decides which months are complete (snapshots); the system's by default. */
  now?: () => Date;
}

export interface GithubSyncReport {
  organizations: number;
  repositories: number;
  /** Units (organizations and repositories) whose stored records changed. */
  changedUnits: number;
  /** Stored repositories deleted because they are no longer public (with their issues, milestones, releases). */
  removedRepositories: number;
  /** Repositories left out because their data could not be read; the others were synced. */
  failed: { repository: string; error: string }[];
  counts: GithubReport;
  /** The profiles of members and organizations asked for after the repositories. */
  profiles: ProfileReport;
  requests: RequestStats;
  changed: boolean;
  dataVersion: number;
  durationMs: number;
  /** Every project's health, computed after the units (docs/health.md); absent when the run stopped early. */
  health?: HealthReport;
  /** Set when the run stopped early: why, and that the next run resumes from there. */
  stopped?: string;
}

export async function syncGithub(db: Db, options: GithubSyncOptions): Promise<GithubSyncReport> {
  const started = performance.now();
  const log = options.log ?? QUIET_LOG;
  const progress = options.progress ?? NO_PROGRESS;
  const { octokit, stats } = createGithubClient({ ...options, log });
  const ctx: UnitContext = { db, octokit, perPage: options.perPage ?? 100, counts: options.repositoryCounts ?? true };
  const counts = Object.fromEntries(GITHUB_RESOURCES.map((r) => [r, { ...emptyCounts(), skipped: 0 }])) as GithubReport;
  const report: GithubSyncReport = {
    organizations: 0,
    repositories: 0,
    changedUnits: 0,
    removedRepositories: 0,
    failed: [],
    counts,
    requests: stats,
    changed: false,
    dataVersion: 0,
    durationMs: 0,
    profiles: { asked: 0, fetched: 0, changed: 0, notModified: 0, missing: 0 },
  };
  const add = (result: BatchResult | undefined) => {
    if (!result) return;
    for (const resource of GITHUB_RESOURCES) {
      for (const key of ['total', 'inserted', 'updated', 'deactivated', 'skipped'] as const)
        counts[resource][key] += result.report[resource][key];
    }
    if (result.changed) report.changedUnits++;
  };

  const repositories: RepositoryRecord[] = [];
  try {
    for (const login of options.organizations) {
      options.signal?.throwIfAborted();
      const result = await syncOrganization(ctx, login);
      add(result.written);
      report.removedRepositories += result.removed;
      if (result.removed > 0) report.changedUnits++;
      repositories.push(...result.repositories);
      report.organizations++;
    }
    progress.start(repositories.length, 'repositories');
    await eachWithLimit(repositories, options.concurrency ?? 4, options.signal, async (repository) => {
      const name = `${repository.owner_login}/${repository.name}`;
      try {
        add(await syncRepository(ctx, repository));
      } catch (error) {
        // Bad data in one repository must not starve the others; anything else (network, limits) stops the run.
        if (!(error instanceof ImportError)) throw error;
        report.failed.push({ repository: name, error: error.message });
        log.warn(`${name}: skipped: ${error.message}`);
      }
      report.repositories++;
      progress.advance(`${name} (${stats.total} requests)`);
    });
    report.profiles = await syncProfiles({
      db,
      octokit,
      log,
      budget: options.profileRequests ?? PROFILE_REQUESTS,
      concurrency: options.concurrency ?? 4,
      signal: options.signal,
      skip: options.organizations.map((login) => login.toLowerCase()),
      onWritten: add,
      each: eachWithLimit,
    });
  } catch (error) {
    const done = `${report.organizations} of ${options.organizations.length} organizations, ${report.repositories} of ${repositories.length} repositories`;
    const message = `GitHub sync stopped after ${done} (each stored whole; the next run resumes): ${stats.stopped ?? messageOf(error)}`;
    await finishReport(db, report, started);
    report.stopped = message;
    throw new SyncStopped(message, report, error);
  } finally {
    progress.stop();
  }
  // Units commit one by one; the snapshots follow once, at the end of every run (a month may also have
  // completed since the last one). A stopped run leaves them to the next run.
  const snapshots = await refreshSnapshots(db, options.now);
  // The pull requests, issues and releases just stored are the health checks' inputs (docs/health.md).
  const health = await refreshHealth(db, options.now?.() ?? new Date());
  await finishReport(db, report, started);
  report.health = health;
  report.changed ||= snapshots.changed || health.changed > 0 || health.points > 0;
  return report;
}

async function finishReport(db: Db, report: GithubSyncReport, started: number): Promise<void> {
  report.changed = report.changedUnits > 0;
  // The database may be what failed: the report still goes out, with the version it last knew (0).
  report.dataVersion = await readDataVersion(db).catch(() => report.dataVersion);
  report.durationMs = Math.round(performance.now() - started);
}

/** A run that failed part-way; what it stored is complete per unit and stays. */
export class SyncStopped extends Error {
  constructor(
    message: string,
    readonly report: GithubSyncReport,
    cause: unknown,
  ) {
    super(message, { cause });
    this.name = 'SyncStopped';
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs `work` on every item, `limit` at a time; the first failure stops new work and is rethrown. */
async function eachWithLimit<T>(
  items: T[],
  limit: number,
  signal: AbortSignal | undefined,
  work: (item: T) => Promise<void>,
) {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++]!;
      try {
        signal?.throwIfAborted();
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
}
