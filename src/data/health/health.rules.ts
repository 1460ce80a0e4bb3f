// The health score (issue 47, docs/health.md): the reference's 17 pass/fail checks with its thresholds per level
// (its `owasp_update_project_health_requirements` command, TECH-NOTES.md), weights summing to 100, and its three known
// flaws fixed. Pure: the inputs come from health.queries.ts, the result is stored as it is.
import type { ProjectLevel } from '../../db/schema.ts';

export const HEALTH_FORMULA = 'nest-compatible-1';

export type Direction = 'at_least' | 'at_most';
export type Bucket = 'healthy' | 'needs_attention' | 'unhealthy';
type Scored = 'incubator' | 'lab' | 'production' | 'flagship';

/** What one project's mirrored records say; null where the input is unknown (no repository mirrored, …). */
export interface HealthInputs {
  level: ProjectLevel;
  /** The project's own creation date (the website data's). */
  createdAt: Date | null;
  /** How many of the project's repositories are mirrored: none makes every repository check unknown. */
  repositories: number;
  contributors: number;
  forks: number;
  stars: number;
  leaders: number;
  lastCommitAt: Date | null;
  lastPullRequestAt: Date | null;
  lastReleaseAt: Date | null;
  /** The `www-project-<key>` repository's `updated_at`; undefined when that repository is not mirrored. */
  pageUpdatedAt: Date | null | undefined;
  openIssues: number;
  openPullRequests: number;
  totalPullRequests: number;
  totalReleases: number;
  /** Published (not draft) release dates, newest first, enough to count those of any level's window. */
  releaseDates: Date[];
  unansweredIssues: number;
  unassignedIssues: number;
}

export interface Check {
  name: string;
  value: number | boolean | null;
  threshold: number | boolean;
  direction: Direction;
  /** null: the input is unknown, the check is left out of the score. */
  pass: boolean | null;
  weight: number;
  /** `recent_releases_count` only: the level's window. */
  window_days?: number;
}

export interface HealthResult {
  score: number;
  bucket: Bucket;
  /** The share of the weights whose input was known, 0–1. */
  coverage: number;
  checks: Check[];
}

type Thresholds = Record<Scored, number | boolean>;
interface Rule {
  name: string;
  direction: Direction;
  weight: number;
  thresholds: Thresholds;
}

const at = (
  incubator: number | boolean,
  lab: number | boolean,
  production: number | boolean,
  flagship: number | boolean,
) => ({ incubator, lab, production, flagship }) satisfies Thresholds;

/** The reference's requirements by level: incubator, lab, production, flagship. In the contract's (alphabetical) order. */
export const HEALTH_RULES: readonly Rule[] = [
  { name: 'age_days', direction: 'at_least', weight: 6, thresholds: at(15, 20, 30, 30) },
  { name: 'contributors_count', direction: 'at_least', weight: 6, thresholds: at(1, 3, 4, 5) },
  { name: 'forks_count', direction: 'at_least', weight: 6, thresholds: at(2, 5, 7, 10) },
  {
    name: 'is_funding_requirements_compliant',
    direction: 'at_least',
    weight: 5,
    thresholds: at(true, true, true, true),
  },
  {
    name: 'is_leader_requirements_compliant',
    direction: 'at_least',
    weight: 5,
    thresholds: at(false, true, true, true),
  },
  { name: 'last_commit_days', direction: 'at_most', weight: 6, thresholds: at(365, 270, 90, 180) },
  { name: 'last_pull_request_days', direction: 'at_most', weight: 6, thresholds: at(60, 45, 30, 30) },
  { name: 'last_release_days', direction: 'at_most', weight: 6, thresholds: at(365, 365, 180, 365) },
  { name: 'open_issues_count', direction: 'at_most', weight: 6, thresholds: at(10, 8, 5, 5) },
  { name: 'open_pull_requests_count', direction: 'at_least', weight: 6, thresholds: at(5, 4, 3, 3) },
  { name: 'owasp_page_last_update_days', direction: 'at_most', weight: 6, thresholds: at(60, 45, 30, 30) },
  { name: 'recent_releases_count', direction: 'at_least', weight: 6, thresholds: at(1, 1, 2, 2) },
  { name: 'stars_count', direction: 'at_least', weight: 6, thresholds: at(10, 25, 40, 50) },
  { name: 'total_pull_requests_count', direction: 'at_least', weight: 6, thresholds: at(5, 10, 15, 20) },
  { name: 'total_releases_count', direction: 'at_least', weight: 6, thresholds: at(2, 3, 4, 5) },
  { name: 'unanswered_issues_count', direction: 'at_most', weight: 6, thresholds: at(5, 4, 2, 3) },
  { name: 'unassigned_issues_count', direction: 'at_most', weight: 6, thresholds: at(5, 4, 2, 3) },
];

/** The reference's `recent_releases_time_window_days` by level (it counted over a fixed 60 days whatever this said). */
export const RELEASE_WINDOW_DAYS: Record<Scored, number> = { incubator: 120, lab: 90, production: 60, flagship: 90 };

/** The longest window: the release dates a computation needs. */
export const LONGEST_RELEASE_WINDOW_DAYS = Math.max(...Object.values(RELEASE_WINDOW_DAYS));

/** The reference has no requirements for `other` (unrated) projects: they are held to the incubator's, the lowest. */
export function scoredLevel(level: ProjectLevel): Scored {
  return level === 'other' ? 'incubator' : level;
}

export function bucketOf(score: number): Bucket {
  if (score >= 75) return 'healthy';
  if (score >= 50) return 'needs_attention';
  return 'unhealthy';
}

const DAY_MS = 86_400_000;

/** Whole days from `date` to `now`, as the reference counts them (Python's `timedelta.days`: rounded down). */
export function daysSince(date: Date, now: Date): number {
  return Math.floor((now.getTime() - date.getTime()) / DAY_MS);
}

/**
 * The value of every check. `undefined`: unknown (left out). A "days since" check of a project whose repositories
 * never had the event (no release, no commit, no pull request) is `null` and fails: the reference counted a missing
 * date as 0 days, so a project that never released passed "days since last release".
 */
function valuesOf(
  inputs: HealthInputs,
  now: Date,
  windowDays: number,
): Record<string, number | boolean | null | undefined> {
  const mirrored = inputs.repositories > 0;
  const known = <T>(value: T): T | undefined => (mirrored ? value : undefined);
  const since = (date: Date | null) => known(date === null ? null : daysSince(date, now));
  const windowStart = now.getTime() - windowDays * DAY_MS;
  return {
    age_days: inputs.createdAt === null ? undefined : daysSince(inputs.createdAt, now),
    contributors_count: known(inputs.contributors),
    forks_count: known(inputs.forks),
    // Funding is not mirrored (the reference reads each repository's FUNDING.yml): unknown.
    is_funding_requirements_compliant: undefined,
    is_leader_requirements_compliant: inputs.leaders > 1,
    last_commit_days: since(inputs.lastCommitAt),
    last_pull_request_days: since(inputs.lastPullRequestAt),
    last_release_days: since(inputs.lastReleaseAt),
    open_issues_count: known(inputs.openIssues),
    open_pull_requests_count: known(inputs.openPullRequests),
    owasp_page_last_update_days:
      inputs.pageUpdatedAt === undefined
        ? undefined
        : inputs.pageUpdatedAt === null
          ? null
          : daysSince(inputs.pageUpdatedAt, now),
    recent_releases_count: known(inputs.releaseDates.filter((d) => d.getTime() >= windowStart && d <= now).length),
    stars_count: known(inputs.stars),
    total_pull_requests_count: known(inputs.totalPullRequests),
    total_releases_count: known(inputs.totalReleases),
    unanswered_issues_count: known(inputs.unansweredIssues),
    unassigned_issues_count: known(inputs.unassignedIssues),
  };
}

function passes(value: number | boolean | null, threshold: number | boolean, direction: Direction): boolean {
  if (value === null) return false;
  const [v, t] = [Number(value), Number(threshold)];
  return direction === 'at_least' ? v >= t : v <= t;
}

export function computeHealth(inputs: HealthInputs, now: Date): HealthResult {
  const level = scoredLevel(inputs.level);
  const windowDays = RELEASE_WINDOW_DAYS[level];
  const values = valuesOf(inputs, now, windowDays);
  let known = 0;
  let passed = 0;
  const checks = HEALTH_RULES.map((rule): Check => {
    const value = values[rule.name];
    const threshold = rule.thresholds[level];
    const pass = value === undefined ? null : passes(value, threshold, rule.direction);
    if (pass !== null) known += rule.weight;
    if (pass) passed += rule.weight;
    const check: Check = {
      name: rule.name,
      value: value ?? null,
      threshold,
      direction: rule.direction,
      pass,
      weight: rule.weight,
    };
    return rule.name === 'recent_releases_count' ? { ...check, window_days: windowDays } : check;
  });
  // Scaled over the weights whose input is known; nothing known scores 0.
  const score = known === 0 ? 0 : Math.round((passed / known) * 10_000) / 100;
  return { score, bucket: bucketOf(score), coverage: Math.round(known) / 100, checks };
}
