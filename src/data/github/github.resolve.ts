// Once every response has been read: ties issues, labels, milestones and releases to repositories by
// name, picks one version of each, and resolves labels and memberships given by name or login.
// The dataset import (github.read.ts with a transaction) resolves issues, labels, accounts and
// repositories in SQL instead (import/github/*.stage.ts) and uses only the parts for milestones, releases and
// memberships here, given the repositories and organizations it needs by name.
import { describe } from './github.fields.ts';
import { mapLabel, mapMilestone, mapRelease } from './github.mapping.ts';
import type { Collected, IssueLabels, Membership, Pending } from './github.pending.ts';
import type {
  GithubData,
  GithubResource,
  IssueRecord,
  LabelRecord,
  OrganizationMemberRecord,
} from './github.records.ts';
import { Versions } from './github.versions.ts';

type Mapper<T> = (value: unknown, source: string, repositoryGithubId: number) => T;

/** Records left out, by resource: their distinct descriptions. */
export class Skipped {
  readonly #skipped = new Map<GithubResource, Set<string>>();

  add(resource: GithubResource, key: string): void {
    this.#skipped.set(resource, (this.#skipped.get(resource) ?? new Set()).add(key));
  }

  count(resource: GithubResource): number {
    return this.#skipped.get(resource)?.size ?? 0;
  }
}

/**
 * The records of a repository-scoped kind, one version each; a record whose repository is not in the
 * source cannot be stored (repository_id is NOT NULL) and is skipped. `repositoryIds`: lower-case
 * `owner/name` → GitHub id.
 */
function resolveScoped<T extends { github_id: number }>(
  resource: GithubResource,
  mapper: Mapper<T>,
  list: Pending[],
  repositoryIds: Map<string, number>,
  skipped: Skipped,
): T[] {
  const versions = new Versions<T>();
  for (const { api, source, repository } of list) {
    const repositoryId = repositoryIds.get(repository.toLowerCase());
    if (repositoryId === undefined) skipped.add(resource, describe(resource, api));
    else versions.add(mapper(api, source, repositoryId), api);
  }
  return versions.records();
}

const resolveMilestones = (collected: Collected, repositoryIds: Map<string, number>, skipped: Skipped) =>
  resolveScoped('milestones', mapMilestone, collected.pending.milestones, repositoryIds, skipped);
const resolveReleases = (collected: Collected, repositoryIds: Map<string, number>, skipped: Skipped) =>
  resolveScoped('releases', mapRelease, collected.pending.releases, repositoryIds, skipped);

export function resolvePending(collected: Collected): GithubData {
  const skipped = new Skipped();
  const repositoryIds = new Map<string, number>();
  for (const { owner_login, name, github_id } of collected.repositories.records()) {
    repositoryIds.set(`${owner_login}/${name}`.toLowerCase(), github_id);
  }

  const milestones = resolveMilestones(collected, repositoryIds, skipped);
  // Labels were mapped, and their copies merged, when read (github.collect.ts PendingLabel).
  const labels = new Versions<LabelRecord>();
  for (const pending of collected.pending.labels) {
    const repositoryId = repositoryIds.get(pending.repository.toLowerCase());
    if (repositoryId === undefined) skipped.add('labels', pending.description);
    else if (pending.error !== undefined) throw pending.error;
    else labels.addCounted({ ...pending.record!, repository_github_id: repositoryId }, pending.fields);
  }
  const releases = resolveReleases(collected, repositoryIds, skipped);
  const labelIds = new Map<string, number>();
  for (const { repository_github_id, name, github_id } of labels.records()) {
    labelIds.set(`${repository_github_id}/${name.toLowerCase()}`, github_id);
  }

  // Issues were mapped when read (github.collect.ts PendingIssue): here they get their repository and the labels
  // they name without an id.
  const issues = new Versions<IssueRecord>();
  for (const pending of collected.pending.issues) {
    const repositoryId = repositoryIds.get(pending.repository.toLowerCase());
    if (repositoryId === undefined) {
      skipped.add('issues', pending.description);
      continue;
    }
    if (pending.error !== undefined) throw pending.error;
    const issue = pending.record!;
    issue.repository_github_id = repositoryId;
    for (const name of pending.idLessLabels!) {
      const id = labelIds.get(`${repositoryId}/${name.toLowerCase()}`);
      if (id === undefined) skipped.add('labels', `${repositoryId}/${name}`);
      else issue.label_github_ids.push(id);
    }
    issues.addCounted(issue, pending.fields);
  }

  const issuesByNumber = new Map(issues.records().map((i) => [`${i.repository_github_id}#${i.number}`, i]));
  for (const { repository, number, labels: given } of collected.issueLabels) {
    const repositoryId = repositoryIds.get(repository.toLowerCase());
    const issue = issuesByNumber.get(`${repositoryId}#${number}`);
    if (issue === undefined || repositoryId === undefined) continue;
    issue.label_github_ids = given.map((label) => mapLabel(label.api, label.source, repositoryId).github_id);
  }
  for (const issue of issues.records()) {
    issue.label_github_ids = [...new Set(issue.label_github_ids)];
    issue.assignee_github_ids = [...new Set(issue.assignee_github_ids)];
  }

  const byLogin = new Map(collected.organizations.records().map((o) => [o.login.toLowerCase(), o.github_id]));
  return {
    organizations: collected.organizations.records(),
    members: collected.members.records(),
    repositories: collected.repositories.records(),
    milestones,
    issues: issues.records(),
    labels: labels.records(),
    releases,
    organizationMembers: resolveMemberships(collected.memberships, byLogin),
    skipped: skippedCounts(skipped),
  };
}

export function skippedCounts(skipped: Skipped): GithubData['skipped'] {
  return {
    organizations: 0,
    members: 0,
    repositories: 0,
    issues: skipped.count('issues'),
    labels: skipped.count('labels'),
    milestones: skipped.count('milestones'),
    releases: skipped.count('releases'),
  };
}

// A member list names its organization by login (the request path); a webhook payload gives its id.
// Memberships of an organization absent from the source are dropped. `byLogin`: lower-case login → GitHub id.
export function resolveMemberships(
  memberships: Membership[],
  byLogin: Map<string, number>,
): OrganizationMemberRecord[] {
  const pairs = new Map<string, OrganizationMemberRecord>();
  for (const { organization, memberGithubId } of memberships) {
    const id = 'githubId' in organization ? organization.githubId : byLogin.get(organization.login.toLowerCase());
    if (id === undefined) continue;
    pairs.set(`${id}/${memberGithubId}`, { organization_github_id: id, member_github_id: memberGithubId });
  }
  return [...pairs.values()];
}

/** The labels a response lists for one issue (`/issues/N/labels`), replacing its copies'; the last one for an issue wins. */
export interface LabelOverride {
  repositoryGithubId: number;
  number: number;
  labelGithubIds: number[];
}

export function labelOverrides(issueLabels: IssueLabels[], repositoryIds: Map<string, number>): LabelOverride[] {
  const overrides = new Map<string, LabelOverride>();
  for (const { repository, number, labels: given } of issueLabels) {
    const repositoryId = repositoryIds.get(repository.toLowerCase());
    if (repositoryId === undefined) continue;
    const labelGithubIds = given.map((label) => mapLabel(label.api, label.source, repositoryId).github_id);
    overrides.set(`${repositoryId}#${number}`, { repositoryGithubId: repositoryId, number, labelGithubIds });
  }
  return [...overrides.values()];
}
