// Upstream activity on the GitHub API stand-in for the change log's tests (test/change-log.test.ts): a repository
// that appears with one issue, label, milestone and release by a new author, is edited, then goes; an organization
// and a member renamed or edited as GitHub serves them.
import { profileOf, type GithubApiStandIn, type StandInRepository } from './github-api-standin.ts';

type Json = Record<string, unknown>;

const ORGANIZATION = 'octokit-fixture-org';
const NAME = 'change-log-demo';
const FULL = `${ORGANIZATION}/${NAME}`;
const API = `https://api.github.com/repos/${FULL}`;
const WEB = `https://github.com/${FULL}`;

/** A copy of a recorded object with another repository's (or account's) name in every address. */
const retarget = <T>(value: T, from: string, to: string): T =>
  JSON.parse(JSON.stringify(value).replaceAll(from, to)) as T;

function organizationOf(standIn: GithubApiStandIn) {
  return standIn.organizations.find((o) => o.organization.login === ORGANIZATION)!;
}

function account(standIn: GithubApiStandIn, login: string, id: number): Json {
  const recorded = organizationOf(standIn).repositories.flatMap((r) => r.issues)[0]!.user as Json;
  return { ...retarget(recorded, String(recorded.login), login), id, node_id: `U_${id}` };
}

let rich: StandInRepository | undefined;

/** The repository appears: an issue by a newcomer, with a new label and a new milestone; a release; and the organization renamed. */
export function addRichRepository(standIn: GithubApiStandIn): void {
  const organization = organizationOf(standIn);
  const all = standIn.organizations.flatMap((o) => o.repositories);
  const template = organization.repositories[0]!;
  const newcomer = account(standIn, 'change-log-newcomer', 990_501);
  standIn.profiles.set('change-log-newcomer', profileOf(newcomer));
  const repository = {
    ...retarget(template.repository, String(template.repository.full_name), FULL),
    id: 990_001,
    node_id: 'R_change_log',
    name: NAME,
    full_name: FULL,
    description: 'Where changes are followed',
    created_at: '2024-03-01T10:00:00Z',
    updated_at: '2024-03-01T10:00:00Z',
    pushed_at: '2024-03-01T10:00:00Z',
  };
  const label = {
    id: 990_201,
    node_id: 'LA_change_log',
    url: `${API}/labels/needs-triage`,
    name: 'needs-triage',
    color: 'ededed',
    default: false,
    description: 'To sort',
  };
  const recordedMilestone = all.flatMap((r) => r.milestones)[0]!;
  const milestone = {
    ...retarget(recordedMilestone, String(/repos\/([^/]+\/[^/]+)\//.exec(String(recordedMilestone.url))![1]), FULL),
    id: 990_301,
    node_id: 'MI_change_log',
    number: 1,
    title: 'v1',
    creator: newcomer,
    open_issues: 1,
    closed_issues: 0,
    state: 'open',
    created_at: '2024-03-01T11:00:00Z',
    updated_at: '2024-03-01T11:00:00Z',
  };
  const recordedIssue = organization.repositories.flatMap((r) => r.issues)[0]!;
  const issue = {
    ...retarget(recordedIssue, String(/repos\/([^/]+\/[^/]+)/.exec(String(recordedIssue.repository_url))![1]), FULL),
    id: 990_101,
    node_id: 'I_change_log',
    number: 1,
    url: `${API}/issues/1`,
    html_url: `${WEB}/issues/1`,
    title: 'Changes are followed',
    user: newcomer,
    labels: [label],
    milestone,
    assignee: null,
    assignees: [],
    state: 'open',
    closed_at: null,
    created_at: '2024-03-01T12:00:00Z',
    updated_at: '2024-03-01T12:00:00Z',
  };
  const recordedRelease = all.flatMap((r) => r.releases)[0]!;
  const release = {
    ...retarget(recordedRelease, String(/repos\/([^/]+\/[^/]+)\//.exec(String(recordedRelease.url))![1]), FULL),
    id: 990_401,
    node_id: 'RE_change_log',
    url: `${API}/releases/990401`,
    html_url: `${WEB}/releases/tag/v1.0.0`,
    tag_name: 'v1.0.0',
    name: 'First',
    author: newcomer,
    draft: false,
    prerelease: false,
    created_at: '2024-03-01T13:00:00Z',
    published_at: '2024-03-01T13:00:00Z',
  };
  rich = { repository, issues: [issue], labels: [label], milestones: [milestone], releases: [release] };
  organization.repositories.push(rich);
  const profile = standIn.profiles.get(ORGANIZATION)!;
  profile.name = 'Octokit Fixture Organization';
}

/** Everything of it edited upstream; its author renamed (a new login, the same account), then edits a profile field. */
export function editRichRepository(standIn: GithubApiStandIn): void {
  const { repository, issues, labels, milestones, releases } = rich!;
  Object.assign(repository, { description: 'Where every change is followed', updated_at: '2024-04-01T10:00:00Z' });
  Object.assign(issues[0]!, { title: 'Changes are followed, all of them', updated_at: '2024-04-01T12:00:00Z' });
  Object.assign(labels[0]!, { color: 'b60205' });
  Object.assign(milestones[0]!, { title: 'v1.0', updated_at: '2024-04-01T11:00:00Z' });
  Object.assign(releases[0]!, { name: 'The first' });
  const renamed = account(standIn, 'change-log-renamed', 990_501);
  standIn.profiles.delete('change-log-newcomer');
  standIn.profiles.set('change-log-renamed', profileOf(renamed));
  issues[0]!.user = renamed;
  milestones[0]!.creator = renamed;
  releases[0]!.author = renamed;
  // And a member's profile edited: the profile step reads it again.
  const [login, profile] = [...standIn.profiles].find(
    ([name, value]) => value.type === 'User' && !name.startsWith('change-log'),
  )!;
  profile.bio = `${login} follows changes`;
}

const RENAMED = `${ORGANIZATION}/change-log-renamed`;

/**
 * The repository renamed upstream: the same repository (its GitHub id) under another name, and every address of its
 * issue, label, milestone and release changed with it, as GitHub serves them then.
 */
export function renameRichRepository(): void {
  const { repository, issues, labels, milestones, releases } = rich!;
  for (const record of [repository, ...issues, ...labels, ...milestones, ...releases])
    Object.assign(record, retarget(record, FULL, RENAMED));
  Object.assign(repository, { name: RENAMED.split('/')[1], updated_at: '2024-05-01T10:00:00Z' });
}

/** The repository deleted upstream (or made private): its listing no longer names it, and asked for it is a 404. */
export function removeRichRepository(standIn: GithubApiStandIn): void {
  const organization = organizationOf(standIn);
  organization.repositories = organization.repositories.filter((r) => r !== rich);
}
