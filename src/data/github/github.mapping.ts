// GitHub REST objects → records of the GitHub tables. The import of recorded responses and the live
// sync both go through these functions, so old and new response shapes are handled here.
import { Fields, isApiObject } from './github.fields.ts';
import type {
  IssueRecord,
  LabelRecord,
  MemberRecord,
  MilestoneRecord,
  OrganizationRecord,
  PullRequestRecord,
  ReleaseRecord,
  RepositoryRecord,
} from './github.records.ts';

export function mapOrganization(value: unknown, source: string): OrganizationRecord {
  const f = new Fields(value, 'organization', source);
  const login = f.requiredText('login');
  return {
    github_id: f.integer('id'),
    login,
    name: f.text('name'),
    description: f.text('description'),
    company: f.text('company'),
    location: f.text('location'),
    email: f.text('email'),
    avatar_url: f.text('avatar_url'),
    url: profileUrl(f, login),
    followers_count: f.count('followers'),
    public_repositories_count: f.count('public_repos'),
    created_at: f.timestamp('created_at'),
    updated_at: f.timestamp('updated_at'),
  };
}

/** A user or bot. Its e-mail address is deliberately not kept; GitHub has no job title. */
export function mapMember(value: unknown, source: string): MemberRecord {
  const f = new Fields(value, 'member', source);
  const login = f.requiredText('login');
  return {
    github_id: f.integer('id'),
    login,
    name: f.text('name'),
    avatar_url: f.text('avatar_url'),
    url: profileUrl(f, login),
    bio: f.text('bio'),
    company: f.text('company'),
    location: f.text('location'),
    title: '',
    twitter_username: f.text('twitter_username'),
    followers_count: f.count('followers'),
    following_count: f.count('following'),
    public_repositories_count: f.count('public_repos'),
    created_at: f.timestamp('created_at'),
    updated_at: f.timestamp('updated_at'),
  };
}

export function mapRepository(value: unknown, source: string): RepositoryRecord {
  const f = new Fields(value, 'repository', source);
  if (!f.has('owner')) f.fail('missing "owner"');
  const owner = new Fields(f.api.owner, 'repository owner', source);
  const license = new Fields(f.api.license ?? {}, 'license', source);
  const topics = f.list('topics').map((t) => (typeof t === 'string' ? t : f.fail('"topics" is not a list of names')));
  return {
    github_id: f.integer('id'),
    owner_login: owner.requiredText('login'),
    owner_github_id: owner.integer('id'),
    name: f.requiredText('name'),
    description: f.text('description'),
    homepage: f.text('homepage'),
    language: f.text('language'),
    // Responses from 2013 still carry the old name of the field next to the new one.
    default_branch: f.text('default_branch') || f.text('master_branch'),
    url: f.text('html_url'),
    license: license.text('spdx_id'),
    topics,
    is_archived: f.flag('archived'),
    is_fork: f.flag('fork'),
    commits_count: 0,
    contributors_count: 0,
    forks_count: f.count('forks_count'),
    // Before the 2012 API change `watchers_count` counted stars; those responses lack the new names.
    stars_count: f.count(f.has('stargazers_count') ? 'stargazers_count' : 'watchers_count'),
    watchers_count: f.count(f.has('subscribers_count') ? 'subscribers_count' : 'watchers_count'),
    open_issues_count: f.count('open_issues_count'),
    size: f.count('size'),
    pushed_at: f.timestamp('pushed_at'),
    ...timestamps(f),
  };
}

export function mapMilestone(value: unknown, source: string, repositoryGithubId: number): MilestoneRecord {
  const f = new Fields(value, 'milestone', source);
  return {
    ...numbered(f, repositoryGithubId, 'description', 'creator'),
    open_issues_count: f.count('open_issues'),
    closed_issues_count: f.count('closed_issues'),
    due_on: f.timestamp('due_on'),
    closed_at: f.timestamp('closed_at'),
    ...timestamps(f),
  };
}

/**
 * An issue. Callers skip pull requests (objects with a `pull_request` key) before mapping. Embedded
 * labels without an id (2016 responses) are left out of `label_github_ids`; the reader matches them by name.
 */
export function mapIssue(value: unknown, source: string, repositoryGithubId: number): IssueRecord {
  const f = new Fields(value, 'issue', source);
  return {
    ...numbered(f, repositoryGithubId, 'body', 'user'),
    state_reason: f.text('state_reason'),
    milestone_github_id: f.ref('milestone'),
    comments_count: f.count('comments'),
    is_locked: f.flag('locked'),
    closed_at: f.timestamp('closed_at'),
    ...timestamps(f),
    label_github_ids: f.list('labels').flatMap((label) => (isIdLess(label) ? [] : (f.ref('labels', label) ?? []))),
    assignee_github_ids: assigneesOf(f).flatMap((user) => f.ref('assignees', user) ?? []),
  };
}

/** A pull request of an issues listing; `repository`: its lower-case `owner/name`. */
export function mapPullRequest(value: unknown, source: string, repository: string): PullRequestRecord {
  const f = new Fields(value, 'pull request', source);
  const pull = new Fields(f.api.pull_request ?? {}, 'pull request', source);
  const author = f.api.user ? new Fields(f.api.user, 'pull request author', source).text('login') : '';
  return {
    github_id: f.integer('id'),
    repository: repository.toLowerCase(),
    number: f.integer('number'),
    state: f.state('state'),
    author_login: author,
    created_at: f.requiredTimestamp('created_at'),
    updated_at: f.requiredTimestamp('updated_at'),
    closed_at: f.timestamp('closed_at'),
    merged_at: pull.timestamp('merged_at'),
  };
}

export function mapLabel(value: unknown, source: string, repositoryGithubId: number): LabelRecord {
  const f = new Fields(value, 'label', source);
  const color = f.text('color').toLowerCase();
  if (!/^[0-9a-f]{6}$/.test(color)) f.fail(`"color" is not six hex digits: ${JSON.stringify(f.api.color)}`);
  return {
    ...inRepository(f, repositoryGithubId),
    name: f.requiredText('name'),
    description: f.text('description'),
    color,
    is_default: f.flag('default'),
  };
}

export function mapRelease(value: unknown, source: string, repositoryGithubId: number): ReleaseRecord {
  const f = new Fields(value, 'release', source);
  return {
    ...inRepository(f, repositoryGithubId),
    tag_name: f.requiredText('tag_name'),
    name: f.text('name'),
    description: f.text('body'),
    url: f.text('html_url'),
    author_github_id: f.ref('author'),
    is_draft: f.flag('draft'),
    is_prerelease: f.flag('prerelease'),
    published_at: f.timestamp('published_at'),
    created_at: f.requiredTimestamp('created_at'),
  };
}

/** The GitHub id of a record kept per repository, and that repository's. */
function inRepository(f: Fields, repositoryGithubId: number) {
  return { github_id: f.integer('id'), repository_github_id: repositoryGithubId };
}

/** What milestones and issues share: a number in their repository, a title, a body, a state, a page, an author. */
function numbered(f: Fields, repositoryGithubId: number, bodyKey: string, authorKey: string) {
  return {
    ...inRepository(f, repositoryGithubId),
    number: f.integer('number'),
    title: f.text('title'),
    body: f.text(bodyKey),
    state: f.state('state'),
    url: f.text('html_url'),
    author_github_id: f.ref(authorKey),
  };
}

/** The two timestamps every repository, milestone and issue has. */
function timestamps(f: Fields) {
  return { created_at: f.requiredTimestamp('created_at'), updated_at: f.requiredTimestamp('updated_at') };
}

/** The users assigned to an issue; responses before 2016 only have the single `assignee`. */
export function assigneesOf(issue: Fields): unknown[] {
  if (issue.has('assignees')) return issue.list('assignees');
  return issue.has('assignee') ? [issue.api.assignee] : [];
}

export function isIdLess(value: unknown): boolean {
  return isApiObject(value) && (value.id === undefined || value.id === null);
}

// Stubs (webhook organizations) have no `html_url`; the profile address follows from the login.
function profileUrl(account: Fields, login: string): string {
  return account.text('html_url') || `https://github.com/${login}`;
}
