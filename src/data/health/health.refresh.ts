// Computing every project's health after each import and sync (issue 47, docs/health.md): one read of the inputs, the
// 17 checks in memory, and the rows whose result changed written back, with today's point of the history. The data
// version moves when anything did, so the response caches drop the answers that show health.
import type { Db } from '../../db/index.ts';
import { bumpDataVersion, readDataVersion } from '../../announcements/counters.queries.ts';
import { lockWrites } from '../base/write-lock.queries.ts';
import { computeHealth, HEALTH_FORMULA, type HealthInputs } from './health.rules.ts';
import {
  readHealthInputs,
  setHealthDataVersion,
  writeHealth,
  writeHealthHistory,
  type ProjectInputsRow,
} from './health.queries.ts';
import { healthMetrics } from './health.metrics.ts';

export interface HealthReport {
  projects: number;
  /** Projects whose stored health changed. */
  changed: number;
  /** History points added or revised (today's). */
  points: number;
  durationMs: number;
}

function inputsOf(row: ProjectInputsRow): HealthInputs {
  return {
    level: row.level,
    createdAt: row.created_at,
    repositories: row.repositories,
    contributors: row.contributors,
    forks: row.forks,
    stars: row.stars,
    leaders: row.leaders,
    lastCommitAt: row.last_commit_at,
    lastPullRequestAt: row.last_pull_request_at,
    lastReleaseAt: row.last_release_at,
    pageUpdatedAt: row.page_found ? row.page_updated_at : undefined,
    openIssues: row.open_issues,
    openPullRequests: row.open_pull_requests,
    totalPullRequests: row.total_pull_requests,
    totalReleases: row.total_releases,
    releaseDates: (row.recent_releases ?? []).map((at) => new Date(at)),
    unansweredIssues: row.unanswered_issues,
    unassignedIssues: row.unassigned_issues,
  };
}

/**
 * In the caller's transaction, which holds the write lock (an import's, a sync's). Not after a seeding from dumps,
 * which brings the source's health and history (data/import/dumps/).
 */
export async function updateHealth(db: Db, now: Date): Promise<HealthReport> {
  const started = performance.now();
  const inputs = await readHealthInputs(db, now);
  const rows = inputs.map((row) => {
    const { score, bucket, coverage, checks } = computeHealth(inputsOf(row), now);
    return {
      project_id: row.id,
      score,
      bucket,
      coverage,
      formula: HEALTH_FORMULA,
      checks,
      metrics: healthMetrics(row),
    };
  });
  const before = await readDataVersion(db);
  const changed = await writeHealth(db, rows, now, before);
  // Once per transaction: the import's or the sync's own bump when it had one (migration 0014).
  if (changed.length > 0) {
    const version = await bumpDataVersion(db);
    if (version !== before) await setHealthDataVersion(db, changed, version);
  }
  const points = await writeHealthHistory(db, now);
  if (points > 0 && changed.length === 0) await bumpDataVersion(db);
  return {
    projects: rows.length,
    changed: changed.length,
    points,
    durationMs: Math.round(performance.now() - started),
  };
}

/** On its own transaction under the write lock: after a GitHub sync (whose units commit one by one), `cds health`. */
export function refreshHealth(db: Db, now: Date = new Date()): Promise<HealthReport> {
  return db.transaction().execute(async (trx) => {
    await lockWrites(trx);
    return updateHealth(trx, now);
  });
}
