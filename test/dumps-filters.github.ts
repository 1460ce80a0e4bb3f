// What the GitHub API stand-in serves the source of test/dumps-filters.test.ts besides the bundled data (which has no
// labelled or assigned issue): the OWASP organization with the website repository of a few of the bundled projects
// (`www-project-<key>`, which their repository paths name), each with labels spelled its own way and issues in every
// combination of state, labels, assignees and comments; one assignee without a GitHub profile (an unpublished member).
// Each repository is also pushed to, and has pull requests and issues closed, in the days before the sync: inputs of
// the projects' health that no dump carries, so a copy that computed health itself would answer it differently.
import type { StandInOrganization, StandInRepository } from './github-api-standin.ts';

type Json = Record<string, unknown>;

const OWNER = { login: 'OWASP', id: 9_300_001, type: 'Organization', avatar_url: '', url: '' };
const user = (login: string, id: number): Json => ({ login, id, type: 'User' });
export const AUTHOR = user('dumps-author', 9_300_010);
const ASSIGNEES = [user('dumps-helper', 9_300_011), user('Dumps-Newcomer', 9_300_012)];
/** The assignee whose profile the stand-in does not serve: its member stays unpublished on the source. */
export const UNPUBLISHED = 'dumps-unpublished';
const UNPUBLISHED_USER = user(UNPUBLISHED, 9_300_013);

/** How each repository spells the beginner label, then its other labels; the languages; the third is archived. */
const REPOSITORIES = [
  { language: 'Python', beginner: 'good first issue', archived: false },
  { language: 'Go', beginner: 'Good-First-Issue', archived: false },
  { language: 'Python', beginner: 'beginner', archived: true },
];
const OTHER_LABELS = ['bug', 'documentation', 'Help Wanted'];

let ids = 9_310_000;
const DAY = 86_400_000;
const iso = (day: number) => new Date(Date.UTC(2024, 0, 1) + day * DAY).toISOString().replace('.000Z', 'Z');
/** `days` before `now` (to the second, as GitHub writes dates). */
const ago = (now: number, days: number) =>
  new Date(Math.floor(now / 1000) * 1000 - days * DAY).toISOString().replace('.000Z', 'Z');
const REPORTER = user('dumps-reporter', 9_300_014);

function repository(key: string, index: number, now: number): StandInRepository {
  const spec = REPOSITORIES[index % REPOSITORIES.length]!;
  const full = `OWASP/www-project-${key}`;
  const labels = [spec.beginner, ...OTHER_LABELS].map((name) => ({
    id: ++ids,
    name,
    color: 'a2eeef',
    description: '',
    default: false,
    url: `https://api.github.com/repos/${full}/labels/${encodeURIComponent(name)}`,
  }));
  // Every combination: open or closed, each label set, no assignee, one, two or the unpublished one, with or without
  // comments; a day apart, so that every ordering is total.
  const labelSets: Json[][] = [[labels[0]!], [labels[0]!, labels[1]!], [labels[2]!], [], [labels[3]!]];
  const assigneeSets: Json[][] = [[], [ASSIGNEES[0]!], [...ASSIGNEES], [UNPUBLISHED_USER]];
  const issues: Json[] = [];
  for (const [l, set] of labelSets.entries())
    for (const [a, assignees] of assigneeSets.entries())
      for (const state of ['open', 'closed'] as const) {
        const number = issues.length + 1;
        const day = index * 100 + number;
        issues.push({
          id: ++ids,
          number,
          title: `Issue ${number} of ${key}`,
          state,
          state_reason: state === 'closed' ? 'completed' : null,
          html_url: `https://github.com/${full}/issues/${number}`,
          url: `https://api.github.com/repos/${full}/issues/${number}`,
          repository_url: `https://api.github.com/repos/${full}`,
          user: AUTHOR,
          labels: set,
          assignee: assignees[0] ?? null,
          assignees,
          milestone: null,
          comments: (l + a + number) % 3,
          locked: false,
          body: '',
          created_at: iso(day),
          updated_at: iso(day + 1),
          closed_at: state === 'closed' ? iso(day + 1) : null,
        });
      }
  // Recent work: issues closed (by another author) and pull requests, open and merged, a few days apart per project.
  const recent = (number: number, days: number, closedDays: number | null, pull: boolean): Json => ({
    id: ++ids,
    number,
    title: `${pull ? 'Pull request' : 'Issue'} ${number} of ${key}`,
    state: closedDays === null ? 'open' : 'closed',
    state_reason: closedDays === null || pull ? null : 'completed',
    html_url: `https://github.com/${full}/${pull ? 'pull' : 'issues'}/${number}`,
    url: `https://api.github.com/repos/${full}/issues/${number}`,
    repository_url: `https://api.github.com/repos/${full}`,
    user: REPORTER,
    labels: [],
    assignee: null,
    assignees: [],
    milestone: null,
    comments: 1,
    locked: false,
    body: '',
    created_at: ago(now, days),
    updated_at: ago(now, closedDays ?? days),
    closed_at: closedDays === null ? null : ago(now, closedDays),
    ...(pull
      ? {
          pull_request: {
            url: `https://api.github.com/repos/${full}/pulls/${number}`,
            merged_at: closedDays === null ? null : ago(now, closedDays),
          },
        }
      : {}),
  });
  const base = index * 10;
  // Five pull requests, three open: enough for the checks of the projects' level (`other`), which lift the source's
  // scores out of the bucket a copy without them would compute.
  const pulls = [20, 19, 18, 17, 3].map((days, k) =>
    recent(issues.length + 1 + k, base + days, k < 2 ? base + days - 10 : null, true),
  );
  issues.push(
    recent(issues.length + 6, base + 35, base + 4, false),
    recent(issues.length + 7, base + 32, base + 1, false),
  );
  return {
    repository: {
      id: ++ids,
      name: `www-project-${key}`,
      full_name: full,
      owner: OWNER,
      private: false,
      html_url: `https://github.com/${full}`,
      url: `https://api.github.com/repos/${full}`,
      description: `The website of ${key}`,
      fork: false,
      archived: spec.archived,
      language: spec.language,
      stargazers_count: index,
      watchers_count: index,
      forks_count: index,
      open_issues_count: issues.filter((i) => i.state === 'open').length,
      size: 1,
      default_branch: 'main',
      created_at: '2020-01-01T00:00:00Z',
      updated_at: iso(index),
      pushed_at: ago(now, 1 + index),
    },
    issues: [...issues, ...pulls],
    labels,
    milestones: [],
    releases: [],
  };
}

/**
 * The OWASP organization with the website repositories of these projects (keys as the projects list gives them); the
 * recent work dated before `now`.
 */
export function contributeOrganization(projectKeys: readonly string[], now: number): StandInOrganization {
  return {
    organization: { ...OWNER, name: 'OWASP', created_at: '2010-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' },
    members: [],
    repositories: projectKeys.map((key, index) => repository(key, index, now)),
  };
}
