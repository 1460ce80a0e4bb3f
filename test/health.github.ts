// What the GitHub API stand-in serves for the health tests (test/health.test.ts): the OWASP organization with, for each
// project, its website repository `www-project-<key>` and a code repository, and their issues, pull requests (items
// of the issues listing with `pull_request`), releases and milestones. A project built `good` passes every check of
// its level; one built `bad` fails every check that can fail. The numbers come from THRESHOLDS, the test's own copy
// of the reference's requirements (TECH-NOTES.md), never from src/.
import type { StandInOrganization, StandInRepository } from './github-api-standin.ts';

type Json = Record<string, unknown>;
export type Level = 'incubator' | 'lab' | 'production' | 'flagship';
export const LEVELS: readonly Level[] = ['incubator', 'lab', 'production', 'flagship'];

/** [name, direction, weight, [incubator, lab, production, flagship]] */
export const THRESHOLDS: readonly [string, 'at_least' | 'at_most', number, (number | boolean)[]][] = [
  ['age_days', 'at_least', 6, [15, 20, 30, 30]],
  ['contributors_count', 'at_least', 6, [1, 3, 4, 5]],
  ['forks_count', 'at_least', 6, [2, 5, 7, 10]],
  ['is_funding_requirements_compliant', 'at_least', 5, [true, true, true, true]],
  ['is_leader_requirements_compliant', 'at_least', 5, [false, true, true, true]],
  ['last_commit_days', 'at_most', 6, [365, 270, 90, 180]],
  ['last_pull_request_days', 'at_most', 6, [60, 45, 30, 30]],
  ['last_release_days', 'at_most', 6, [365, 365, 180, 365]],
  ['open_issues_count', 'at_most', 6, [10, 8, 5, 5]],
  ['open_pull_requests_count', 'at_least', 6, [5, 4, 3, 3]],
  ['owasp_page_last_update_days', 'at_most', 6, [60, 45, 30, 30]],
  ['recent_releases_count', 'at_least', 6, [1, 1, 2, 2]],
  ['stars_count', 'at_least', 6, [10, 25, 40, 50]],
  ['total_pull_requests_count', 'at_least', 6, [5, 10, 15, 20]],
  ['total_releases_count', 'at_least', 6, [2, 3, 4, 5]],
  ['unanswered_issues_count', 'at_most', 6, [5, 4, 2, 3]],
  ['unassigned_issues_count', 'at_most', 6, [5, 4, 2, 3]],
];
export const WINDOW_DAYS: Record<Level, number> = { incubator: 120, lab: 90, production: 60, flagship: 90 };

export const threshold = (name: string, level: Level) =>
  THRESHOLDS.find(([n]) => n === name)![3][LEVELS.indexOf(level)]!;
const num = (name: string, level: Level) => threshold(name, level) as number;

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

let ids = 500_000;
const nextId = () => ++ids;

export const OWNER = { login: 'OWASP', id: 9_000_001, type: 'Organization', avatar_url: '', url: '' };
const user = (n: number): Json => ({ login: `health-user-${n}`, id: 9_100_000 + n, type: 'User' });

function repository(name: string, values: Json): Json {
  const full = `OWASP/${name}`;
  return {
    id: nextId(),
    name,
    full_name: full,
    owner: OWNER,
    private: false,
    html_url: `https://github.com/${full}`,
    url: `https://api.github.com/repos/${full}`,
    description: '',
    fork: false,
    archived: false,
    stargazers_count: 0,
    watchers_count: 0,
    forks_count: 0,
    open_issues_count: 0,
    size: 1,
    default_branch: 'main',
    created_at: '2020-01-01T00:00:00Z',
    ...values,
  };
}

interface IssueSpec {
  at: number;
  closedAt?: number;
  comments?: number;
  assigned?: boolean;
  reason?: 'completed' | 'not_planned';
  author?: number;
  pull?: { mergedAt?: number };
}

function issue(full: string, number: number, spec: IssueSpec): Json {
  const closed = spec.closedAt !== undefined;
  const assignee = user(90);
  return {
    id: nextId(),
    number,
    title: `${spec.pull ? 'Pull request' : 'Issue'} ${number}`,
    state: closed ? 'closed' : 'open',
    state_reason: closed ? (spec.reason ?? 'completed') : null,
    html_url: `https://github.com/${full}/${spec.pull ? 'pull' : 'issues'}/${number}`,
    url: `https://api.github.com/repos/${full}/issues/${number}`,
    repository_url: `https://api.github.com/repos/${full}`,
    user: user(spec.author ?? 1),
    labels: [],
    assignee: spec.assigned ? assignee : null,
    assignees: spec.assigned ? [assignee] : [],
    milestone: null,
    comments: spec.comments ?? 0,
    locked: false,
    body: '',
    created_at: iso(spec.at),
    updated_at: iso(spec.closedAt ?? spec.at),
    closed_at: closed ? iso(spec.closedAt!) : null,
    ...(spec.pull
      ? {
          pull_request: {
            url: `https://api.github.com/repos/${full}/pulls/${number}`,
            merged_at: spec.pull.mergedAt === undefined ? null : iso(spec.pull.mergedAt),
          },
        }
      : {}),
  };
}

function release(full: string, tag: string, at: number, kind: 'release' | 'draft' | 'prerelease' = 'release'): Json {
  return {
    id: nextId(),
    tag_name: tag,
    name: tag,
    body: '',
    url: `https://api.github.com/repos/${full}/releases/${tag}`,
    html_url: `https://github.com/${full}/releases/tag/${tag}`,
    author: user(1),
    draft: kind === 'draft',
    prerelease: kind === 'prerelease',
    created_at: iso(at),
    published_at: kind === 'draft' ? null : iso(at),
  };
}

function milestone(full: string, number: number, due: number, closedAt?: number): Json {
  return {
    id: nextId(),
    number,
    title: `m${number}`,
    description: '',
    state: closedAt === undefined ? 'open' : 'closed',
    url: `https://api.github.com/repos/${full}/milestones/${number}`,
    html_url: `https://github.com/${full}/milestone/${number}`,
    creator: user(1),
    open_issues: 0,
    closed_issues: 0,
    due_on: iso(due),
    closed_at: closedAt === undefined ? null : iso(closedAt),
    created_at: iso(due - 60 * DAY),
    updated_at: iso(closedAt ?? due - 60 * DAY),
  };
}

export interface HealthProject {
  key: string;
  level: Level;
  good: boolean;
  createdAt: number;
  leaders: number;
  www: StandInRepository;
  code: StandInRepository;
}

/** A project of `level` whose records, as of `now`, pass (good) or fail (bad) every check. */
export function healthProject(key: string, level: Level, good: boolean, now: number): HealthProject {
  const ago = (days: number) => now - days * DAY;
  const www = `www-project-${key}`;
  const code = `${key}-code`;
  const codeFull = `OWASP/${code}`;
  const people = (n: number) => Array.from({ length: n }, (_, i) => user(i + 1));
  const base: StandInRepository = { repository: {}, issues: [], labels: [], milestones: [], releases: [] };
  if (good) {
    const window = WINDOW_DAYS[level];
    const recent = num('recent_releases_count', level);
    const total = num('total_releases_count', level);
    const totalPulls = num('total_pull_requests_count', level);
    const openPulls = num('open_pull_requests_count', level);
    const closedDays = [1, 2, 3, 10, 30];
    const issues = [
      issue(codeFull, 1, { at: ago(20), comments: 1, assigned: true, author: 2 }),
      ...closedDays.map((d, i) => issue(codeFull, 2 + i, { at: ago(100 + d), closedAt: ago(100), author: 3 + i })),
      issue(codeFull, 10, { at: ago(300), closedAt: ago(1), reason: 'not_planned' }),
      issue(codeFull, 11, { at: ago(800), closedAt: ago(400) }),
    ];
    const pulls = Array.from({ length: totalPulls }, (_, i) =>
      issue(codeFull, 100 + i, {
        at: ago(i === 0 ? 1 : 10 + i),
        ...(i < openPulls ? { pull: {} } : { closedAt: ago(5), pull: { mergedAt: ago(5) } }),
      }),
    );
    // The recent releases sit inside the level's own window but, except at production level, outside the reference's
    // fixed 60 days: only the level's window counts them.
    const releases = [
      ...Array.from({ length: recent }, (_, i) => release(codeFull, `v9.${i}`, ago(window - 5 - i))),
      ...Array.from({ length: total - recent }, (_, i) => release(codeFull, `v1.${i}`, ago(400 + 30 * i))),
      release(codeFull, 'v-draft', ago(1), 'draft'),
      release(codeFull, 'v-pre', ago(window + 30), 'prerelease'),
    ];
    return {
      key,
      level,
      good,
      createdAt: ago(400),
      leaders: 2,
      www: {
        ...base,
        repository: repository(www, { pushed_at: iso(ago(3)), updated_at: iso(ago(1)) }),
        contributors: people(1),
      },
      code: {
        ...base,
        repository: repository(code, {
          stargazers_count: num('stars_count', level),
          forks_count: num('forks_count', level),
          pushed_at: iso(ago(1)),
          updated_at: iso(ago(1)),
        }),
        contributors: people(num('contributors_count', level)),
        issues: [...issues, ...pulls],
        releases,
        milestones: [
          milestone(codeFull, 1, ago(10), ago(12)),
          milestone(codeFull, 2, ago(20), ago(15)),
          milestone(codeFull, 3, ago(5)),
          milestone(codeFull, 4, ago(-10)),
        ],
      },
    };
  }
  const openIssues = num('open_issues_count', level) + 1;
  return {
    key,
    level,
    good,
    createdAt: ago(5),
    leaders: 1,
    www: {
      ...base,
      repository: repository(www, { pushed_at: null, updated_at: iso(ago(100)) }),
      contributors: [],
    },
    code: {
      ...base,
      repository: repository(code, {
        stargazers_count: num('stars_count', level) - 1,
        forks_count: num('forks_count', level) - 1,
        pushed_at: null,
        updated_at: iso(ago(100)),
      }),
      contributors: [],
      issues: Array.from({ length: openIssues }, (_, i) => issue(codeFull, 1 + i, { at: ago(30 + i) })),
    },
  };
}

export function organizationOf(projects: HealthProject[]): StandInOrganization {
  return {
    organization: { ...OWNER, name: 'OWASP', created_at: '2010-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' },
    members: [],
    repositories: projects.flatMap((p) => [p.www, p.code]),
  };
}

/** The repository paths of a project as the website data gives them (lower-case `owner/name`). */
export function repositoryPaths(p: HealthProject): string {
  return JSON.stringify([`owasp/www-project-${p.key}`, `owasp/${p.key}-code`]);
}

const daysSince = (at: unknown, now: number) => Math.floor((now - Date.parse(String(at))) / DAY);

/** Each check's value as the test computes it from what the stand-in serves (null: never happened). */
export function expectedValues(p: HealthProject, now: number): Record<string, number | boolean | null> {
  const repos = [p.www, p.code];
  const items = repos.flatMap((r) => r.issues);
  const issues = items.filter((i) => i.pull_request === undefined);
  const pulls = items.filter((i) => i.pull_request !== undefined);
  const open = issues.filter((i) => i.state === 'open');
  const published = repos.flatMap((r) => r.releases).filter((r) => r.draft !== true);
  const latest = (dates: unknown[]) =>
    dates.filter((d) => typeof d === 'string').length === 0
      ? null
      : daysSince(
          dates
            .filter((d): d is string => typeof d === 'string')
            .sort()
            .at(-1),
          now,
        );
  const window = WINDOW_DAYS[p.level];
  return {
    age_days: Math.floor((now - p.createdAt) / DAY),
    contributors_count: repos.reduce((sum, r) => sum + (r.contributors?.length ?? 1), 0),
    forks_count: repos.reduce((sum, r) => sum + Number(r.repository.forks_count), 0),
    is_funding_requirements_compliant: null,
    is_leader_requirements_compliant: p.leaders > 1,
    last_commit_days: latest(repos.map((r) => r.repository.pushed_at)),
    last_pull_request_days: latest(pulls.map((i) => i.created_at)),
    last_release_days: latest(published.map((r) => r.published_at)),
    open_issues_count: open.length,
    open_pull_requests_count: pulls.filter((i) => i.state === 'open').length,
    owasp_page_last_update_days: daysSince(p.www.repository.updated_at, now),
    recent_releases_count: published.filter((r) => now - Date.parse(String(r.published_at)) < window * DAY).length,
    stars_count: repos.reduce((sum, r) => sum + Number(r.repository.stargazers_count), 0),
    total_pull_requests_count: pulls.length,
    total_releases_count: published.length,
    unanswered_issues_count: open.filter((i) => i.comments === 0).length,
    unassigned_issues_count: open.filter((i) => (i.assignees as unknown[]).length === 0).length,
  };
}
