// Once every response has been read: ties issues, labels, milestones and releases to repositories by
// name, picks one version of each, and resolves labels and memberships given by name or login.
import { describe } from './github.fields.ts';
import { mapLabel, mapMilestone, mapRelease } from './github.mapping.ts';
import type { GithubCollector, Pending } from './github.collect.ts';
import type {
  GithubData, GithubResource, IssueRecord, LabelRecord, OrganizationMemberRecord,
} from './github.records.ts';
import type { LabelOverride } from './github.stage.ts';
import { Versions } from './github.versions.ts';

type Mapper<T> = (value: unknown, source: string, repositoryGithubId: number) => T;

export function resolvePending(collected: GithubCollector): GithubData {
  const skipped = new Map<GithubResource, Set<string>>();
  const skip = (resource: GithubResource, key: string) => {
    skipped.set(resource, (skipped.get(resource) ?? new Set()).add(key));
  };
  const repositoryIds = new Map<string, number>();
  for (const { owner_login, name, github_id } of collected.repositories.records()) {
    repositoryIds.set(`${owner_login}/${name}`.toLowerCase(), github_id);
  }

  // A record whose repository is not in the source cannot be stored (repository_id is NOT NULL).
  function resolve<T extends { github_id: number }>(resource: GithubResource, mapper: Mapper<T>, list: Pending[]) {
    const versions = new Versions<T>();
    for (const { api, source, repository } of list) {
      const repositoryId = repositoryIds.get(repository.toLowerCase());
      if (repositoryId === undefined) skip(resource, describe(resource, api));
      else versions.add(mapper(api, source, repositoryId), api);
    }
    return versions;
  }

  const milestones = resolve('milestones', mapMilestone, collected.pending.milestones);
  // Labels were mapped, and their copies merged, when read (collect.ts PendingLabel).
  const labels = new Versions<LabelRecord>();
  for (const pending of collected.pending.labels) {
    const repositoryId = repositoryIds.get(pending.repository.toLowerCase());
    if (repositoryId === undefined) skip('labels', pending.description);
    else if (pending.error !== undefined) throw pending.error;
    else labels.addCounted({ ...pending.record!, repository_github_id: repositoryId }, pending.fields);
  }
  const releases = resolve('releases', mapRelease, collected.pending.releases);
  const labelIds = new Map<string, number>();
  for (const { repository_github_id, name, github_id } of labels.records()) {
    labelIds.set(`${repository_github_id}/${name.toLowerCase()}`, github_id);
  }

  // Issues were mapped when read (collect.ts PendingIssue): here they get their repository and the labels
  // they name without an id.
  const issues = new Versions<IssueRecord>();
  for (const pending of collected.pending.issues) {
    const repositoryId = repositoryIds.get(pending.repository.toLowerCase());
    if (repositoryId === undefined) {
      skip('issues', pending.description);
      continue;
    }
    if (pending.error !== undefined) throw pending.error;
    const issue = pending.record!;
    issue.repository_github_id = repositoryId;
    for (const name of pending.idLessLabels!) {
      const id = labelIds.get(`${repositoryId}/${name.toLowerCase()}`);
      if (id === undefined) skip('labels', `${repositoryId}/${name}`);
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

  const count = (resource: GithubResource) => skipped.get(resource)?.size ?? 0;
  return {
    organizations: collected.organizations.records(),
    members: collected.members.records(),
    repositories: collected.repositories.records(),
    milestones: milestones.records(),
    issues: issues.records(),
    labels: labels.records(),
    releases: releases.records(),
    organizationMembers: resolveMemberships(collected),
    skipped: {
      organizations: 0,
      members: 0,
      repositories: 0,
      issues: count('issues'),
      labels: count('labels'),
      milestones: count('milestones'),
      releases: count('releases'),
    },
  };
}

// A member list names its organization by login (the request path); a webhook payload gives its id.
// Memberships of an organization absent from the source are dropped.
function resolveMemberships(collected: GithubCollector): OrganizationMemberRecord[] {
  const byLogin = new Map(collected.organizations.records().map((o) => [o.login.toLowerCase(), o.github_id]));
  const pairs = new Map<string, OrganizationMemberRecord>();
  for (const { organization, memberGithubId } of collected.memberships) {
    const id = 'githubId' in organization ? organization.githubId : byLogin.get(organization.login.toLowerCase());
    if (id === undefined) continue;
    pairs.set(`${id}/${memberGithubId}`, { organization_github_id: id, member_github_id: memberGithubId });
  }
  return [...pairs.values()];
}

/**
 * What staged issues (github.stage.ts) are resolved against, as above: repositories by lower-case
 * `owner/name`, labels by `<repository id>/<lower-case name>`, and the label lists given per issue
 * (`/issues/N/labels` responses; the last one for an issue wins).
 */
export function stagedIssueKeys(collected: GithubCollector, data: GithubData) {
  const repositories = new Map<string, number>();
  for (const { owner_login, name, github_id } of data.repositories) {
    repositories.set(`${owner_login}/${name}`.toLowerCase(), github_id);
  }
  const labels = new Map<string, number>();
  for (const { repository_github_id, name, github_id } of data.labels) {
    labels.set(`${repository_github_id}/${name.toLowerCase()}`, github_id);
  }
  const overrides = new Map<string, LabelOverride>();
  for (const { repository, number, labels: given } of collected.issueLabels) {
    const repositoryId = repositories.get(repository.toLowerCase());
    if (repositoryId === undefined) continue;
    const labelGithubIds = given.map((label) => mapLabel(label.api, label.source, repositoryId).github_id);
    overrides.set(`${repositoryId}#${number}`, { repositoryGithubId: repositoryId, number, labelGithubIds });
  }
  return { repositories, labels, overrides: [...overrides.values()] };
}
