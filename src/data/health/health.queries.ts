// The inputs of every project's health in one read (one pass over issues, pull requests, releases and milestones
// grouped by project), and the results written in two statements. Each project's repositories are those its
// website data names (`repository_paths`) that are mirrored; its counts are sums over them, its dates the latest.
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import type { ProjectLevel } from '../../db/schema.ts';
import { LONGEST_RELEASE_WINDOW_DAYS } from './health.rules.ts';

export interface ProjectInputsRow {
  id: string;
  key: string;
  level: ProjectLevel;
  created_at: Date | null;
  repositories: number;
  contributors: number;
  forks: number;
  stars: number;
  leaders: number;
  last_commit_at: Date | null;
  last_pull_request_at: Date | null;
  last_release_at: Date | null;
  page_found: boolean;
  page_updated_at: Date | null;
  open_issues: number;
  open_pull_requests: number;
  total_pull_requests: number;
  total_releases: number;
  /** ISO timestamps of the releases inside the longest window, newest first. */
  recent_releases: string[] | null;
  unanswered_issues: number;
  unassigned_issues: number;
  stale_open_issues: number;
  close_median_days: number | null;
  close_p90_days: number | null;
  closed_365: number;
  release_gap_median_days: number | null;
  milestones_due: number;
  milestones_on_time: number;
  issue_authors_365: number;
}

/** Every project's inputs as of `now` (windows end at `now`; states are the stored ones). */
export async function readHealthInputs(db: Db, now: Date): Promise<ProjectInputsRow[]> {
  const at = now.toISOString();
  const { rows } = await sql<ProjectInputsRow>`
    WITH project_repositories AS MATERIALIZED (
      SELECT DISTINCT p.id AS project_id, r.id AS repository_id
      FROM projects p
      CROSS JOIN LATERAL jsonb_array_elements_text(p.repository_paths) AS path (value)
      JOIN repositories r ON lower(r.owner_login) = split_part(path.value, '/', 1)
        AND lower(r.name) = split_part(path.value, '/', 2)
    ),
    repository_stats AS (
      SELECT pr.project_id, count(*)::int AS repositories, sum(r.contributors_count)::int AS contributors,
        sum(r.forks_count)::int AS forks, sum(r.stars_count)::int AS stars, max(r.pushed_at) AS last_commit_at
      FROM project_repositories pr JOIN repositories r ON r.id = pr.repository_id
      GROUP BY pr.project_id
    ),
    issue_stats AS (
      SELECT pr.project_id,
        count(*) FILTER (WHERE i.state = 'open')::int AS open_issues,
        count(*) FILTER (WHERE i.state = 'open' AND i.comments_count = 0)::int AS unanswered_issues,
        count(*) FILTER (WHERE i.state = 'open'
          AND NOT EXISTS (SELECT 1 FROM issue_assignees a WHERE a.issue_id = i.id))::int AS unassigned_issues,
        count(*) FILTER (WHERE i.state = 'open' AND i.comments_count = 0
          AND i.created_at < ${at}::timestamptz - interval '14 days')::int AS stale_open_issues,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM i.closed_at - i.created_at) / 86400)
          FILTER (WHERE ${closedInYear(at)}) AS close_median_days,
        percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM i.closed_at - i.created_at) / 86400)
          FILTER (WHERE ${closedInYear(at)}) AS close_p90_days,
        count(*) FILTER (WHERE ${closedInYear(at)})::int AS closed_365,
        count(DISTINCT i.author_id) FILTER (WHERE i.created_at > ${at}::timestamptz - interval '365 days'
          AND i.created_at <= ${at}::timestamptz)::int AS issue_authors_365
      FROM project_repositories pr JOIN issues i ON i.repository_id = pr.repository_id
      GROUP BY pr.project_id
    ),
    pull_request_stats AS (
      SELECT pr.project_id, count(*)::int AS total_pull_requests,
        count(*) FILTER (WHERE q.state = 'open')::int AS open_pull_requests, max(q.created_at) AS last_pull_request_at
      FROM project_repositories pr JOIN pull_requests q ON q.repository_id = pr.repository_id
      GROUP BY pr.project_id
    ),
    published AS (
      SELECT pr.project_id, coalesce(rl.published_at, rl.created_at) AS at, rl.is_prerelease
      FROM project_repositories pr JOIN releases rl ON rl.repository_id = pr.repository_id
      WHERE NOT rl.is_draft
    ),
    release_stats AS (
      SELECT project_id, count(*)::int AS total_releases, max(at) AS last_release_at,
        array_agg(to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') ORDER BY at DESC)
          FILTER (WHERE at > ${at}::timestamptz - make_interval(days => ${LONGEST_RELEASE_WINDOW_DAYS}))
          AS recent_releases
      FROM published GROUP BY project_id
    ),
    release_gaps AS (
      SELECT project_id, percentile_cont(0.5) WITHIN GROUP (ORDER BY gap) AS release_gap_median_days
      FROM (
        SELECT project_id, extract(epoch FROM at - lag(at) OVER (PARTITION BY project_id ORDER BY at)) / 86400 AS gap
        FROM published WHERE NOT is_prerelease
      ) AS gaps
      WHERE gap IS NOT NULL
      GROUP BY project_id
    ),
    milestone_stats AS (
      SELECT pr.project_id,
        count(*) FILTER (WHERE m.state = 'closed' OR m.due_on <= ${at}::timestamptz)::int AS milestones_due,
        count(*) FILTER (WHERE m.state = 'closed' AND m.closed_at <= m.due_on)::int AS milestones_on_time
      FROM project_repositories pr JOIN milestones m ON m.repository_id = pr.repository_id
      WHERE m.due_on IS NOT NULL
      GROUP BY pr.project_id
    ),
    leader_stats AS (
      SELECT project_id, count(*)::int AS leaders FROM entity_leaders WHERE project_id IS NOT NULL GROUP BY project_id
    )
    SELECT p.id, p.key, p.level, p.created_at,
      coalesce(rs.repositories, 0) AS repositories, coalesce(rs.contributors, 0) AS contributors,
      coalesce(rs.forks, 0) AS forks, coalesce(rs.stars, 0) AS stars, coalesce(ls.leaders, 0) AS leaders,
      rs.last_commit_at, ps.last_pull_request_at, rls.last_release_at,
      page.id IS NOT NULL AS page_found, page.updated_at AS page_updated_at,
      coalesce(iss.open_issues, 0) AS open_issues, coalesce(ps.open_pull_requests, 0) AS open_pull_requests,
      coalesce(ps.total_pull_requests, 0) AS total_pull_requests, coalesce(rls.total_releases, 0) AS total_releases,
      rls.recent_releases, coalesce(iss.unanswered_issues, 0) AS unanswered_issues,
      coalesce(iss.unassigned_issues, 0) AS unassigned_issues, coalesce(iss.stale_open_issues, 0) AS stale_open_issues,
      iss.close_median_days, iss.close_p90_days, coalesce(iss.closed_365, 0) AS closed_365,
      rg.release_gap_median_days, coalesce(ms.milestones_due, 0) AS milestones_due,
      coalesce(ms.milestones_on_time, 0) AS milestones_on_time, coalesce(iss.issue_authors_365, 0) AS issue_authors_365
    FROM projects p
    LEFT JOIN repository_stats rs ON rs.project_id = p.id
    LEFT JOIN issue_stats iss ON iss.project_id = p.id
    LEFT JOIN pull_request_stats ps ON ps.project_id = p.id
    LEFT JOIN release_stats rls ON rls.project_id = p.id
    LEFT JOIN release_gaps rg ON rg.project_id = p.id
    LEFT JOIN milestone_stats ms ON ms.project_id = p.id
    LEFT JOIN leader_stats ls ON ls.project_id = p.id
    -- The reference's OWASP page date: the project's www-project-* repository.
    LEFT JOIN LATERAL (
      SELECT r.id, r.updated_at FROM repositories r
      WHERE lower(r.owner_login) = 'owasp' AND lower(r.name) = 'www-project-' || lower(p.key)
      ORDER BY r.id LIMIT 1
    ) AS page ON true
    ORDER BY p.id`.execute(db);
  return rows;
}

/** Closed in the 365 days before `at`, as done or duplicate: `not_planned` is left out of the time to close. */
function closedInYear(at: string) {
  return sql`i.state = 'closed' AND i.closed_at > ${at}::timestamptz - interval '365 days'
    AND i.closed_at <= ${at}::timestamptz AND i.state_reason <> 'not_planned'`;
}

export interface HealthRow {
  project_id: string;
  score: number;
  bucket: string;
  coverage: number;
  formula: string;
  checks: unknown[];
  metrics: Record<string, unknown>;
}

/**
 * Replaces the stored health of the projects whose result differs (score, coverage, checks or metrics): returns
 * their ids. `computed_at` and `data_version` are those of the computation that first gave the result.
 */
export async function writeHealth(db: Db, rows: HealthRow[], computedAt: Date, dataVersion: number): Promise<string[]> {
  if (rows.length === 0) return [];
  const { rows: written } = await sql<{ project_id: string }>`
    INSERT INTO project_health (project_id, score, bucket, coverage, formula, computed_at, data_version, checks, metrics)
    SELECT r.project_id, r.score, r.bucket, r.coverage, r.formula, ${computedAt.toISOString()}::timestamptz,
      ${dataVersion}, r.checks, r.metrics
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r (
      project_id bigint, score double precision, bucket text, coverage double precision, formula text, checks jsonb,
      metrics jsonb)
    ON CONFLICT (project_id) DO UPDATE SET score = excluded.score, bucket = excluded.bucket,
      coverage = excluded.coverage, formula = excluded.formula, computed_at = excluded.computed_at,
      data_version = excluded.data_version, checks = excluded.checks, metrics = excluded.metrics
    WHERE (project_health.score, project_health.coverage, project_health.formula, project_health.checks,
      project_health.metrics) IS DISTINCT FROM (excluded.score, excluded.coverage, excluded.formula, excluded.checks,
      excluded.metrics)
    RETURNING project_id`.execute(db);
  return written.map((row) => String(row.project_id));
}

/** The data version of rows just written, once the transaction has bumped it. */
export async function setHealthDataVersion(db: Db, projectIds: string[], dataVersion: number): Promise<void> {
  await sql`UPDATE project_health SET data_version = ${dataVersion}
    WHERE project_id = ANY(${projectIds}::bigint[])`.execute(db);
}

/**
 * Today's point of every project (UTC day of `now`), from its stored health. Append-only: a day before a project's
 * latest point is never written (a clock set back, a re-import of old data), and only the latest day is revised.
 * Returns how many points were added or changed.
 */
export async function writeHealthHistory(db: Db, now: Date): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    WITH written AS (
      INSERT INTO project_health_history AS h (project_key, day, score, bucket, coverage, formula, data_version)
      SELECT p.key, (${now.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date, ph.score, ph.bucket, ph.coverage,
        ph.formula, ph.data_version
      FROM project_health ph JOIN projects p ON p.id = ph.project_id
      WHERE NOT EXISTS (
        SELECT 1 FROM project_health_history later
        WHERE later.project_key = p.key AND later.day > (${now.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date
      )
      ON CONFLICT (project_key, day) DO UPDATE SET score = excluded.score, bucket = excluded.bucket,
        coverage = excluded.coverage, formula = excluded.formula, data_version = excluded.data_version
      WHERE (h.score, h.bucket, h.coverage, h.formula) IS DISTINCT FROM
        (excluded.score, excluded.bucket, excluded.coverage, excluded.formula)
      RETURNING 1
    )
    SELECT count(*) AS n FROM written`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
