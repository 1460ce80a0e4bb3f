// Gathers GitHub records from any number of responses, embedded objects included (an issue brings its
// author, assignees, milestone and labels). Issues, labels, milestones and releases name their repository
// only by address, so they wait in `pending` until every repository has been seen.
import { describe, Fields, isApiObject, repositoryOfUrl } from './github.fields.ts';
import {
  assigneesOf,
  isIdLess,
  mapIssue,
  mapLabel,
  mapMember,
  mapMilestone,
  mapOrganization,
  mapPullRequest,
  mapRelease,
  mapRepository,
} from './github.mapping.ts';
import type {
  AccountKind,
  AccountRecords,
  Collected,
  CollectSink,
  IssueLabels,
  Membership,
  Pending,
  PendingIssue,
  PendingLabel,
  PendingScoped,
} from './github.pending.ts';
import type {
  GithubData,
  MemberRecord,
  MilestoneRecord,
  OrganizationRecord,
  PullRequestRecord,
  ReleaseRecord,
  RepositoryRecord,
} from './github.records.ts';
import { resolvePending } from './github.resolve.ts';
import { fieldCount, Versions } from './github.versions.ts';

export class GithubCollector implements Collected {
  readonly organizations = new Versions<OrganizationRecord>();
  readonly members = new Versions<MemberRecord>();
  readonly repositories = new Versions<RepositoryRecord>();
  readonly pending = {
    issues: [] as PendingIssue[],
    labels: [] as PendingLabel[],
    milestones: [] as Pending[],
    releases: [] as Pending[],
  };
  readonly issueLabels: IssueLabels[] = [];
  /** Index in pending.labels of each label kept, by `github id/lower-case repository`. */
  readonly #labelAt = new Map<string, number>();
  readonly memberships: Membership[] = [];
  /**
   * Pull requests met among issues, kept for the health checks (docs/health.md); the objects embedded in them are
   * not stored. One that cannot be read is left out: no public record depends on it.
   */
  readonly pullRequests: PullRequestRecord[] = [];

  /**
   * `sink`: where issues, labels, accounts and repositories go instead of being kept here (the dataset
   * import stages them in the database, import/github/*.stage.ts); `organizations`, `members`, `repositories` and
   * `pending.issues`, `pending.labels` then stay empty.
   */
  constructor(readonly sink?: CollectSink) {}

  organization(value: unknown, source: string): OrganizationRecord {
    return this.#account('organizations', mapOrganization(value, source), value);
  }

  member(value: unknown, source: string): MemberRecord {
    return this.#account('members', mapMember(value, source), value);
  }

  #account<K extends AccountKind>(kind: K, record: AccountRecords[K], value: unknown): AccountRecords[K] {
    if (!this.sink) return (this[kind] as Versions<AccountRecords[K]>).add(record, value);
    this.sink.account(kind, record, fieldCount(value));
    return record;
  }

  /** A user, bot or organization (repository owners and webhook senders can be any of them). */
  account(value: unknown, source: string): void {
    if (isApiObject(value) && value.type === 'Organization') this.organization(value, source);
    else this.member(value, source);
  }

  repository(value: unknown, source: string): void {
    this.#account('repositories', mapRepository(value, source), value);
    const f = new Fields(value, 'repository', source);
    this.account(f.api.owner, source);
    if (f.has('organization')) this.account(f.api.organization, source);
  }

  issue(value: unknown, source: string, context?: string): void {
    const f = new Fields(value, 'issue', source);
    if (f.api.pull_request !== undefined) {
      try {
        this.pullRequests.push(mapPullRequest(value, source, repositoryOf(f, 'repository_url', context)));
      } catch {
        // Left out (see pullRequests).
      }
      return;
    }
    const repository = repositoryOf(f, 'repository_url', context);
    const pending = prepareIssue(value, source, repository);
    if (this.sink) this.sink.issue(pending);
    else this.pending.issues.push(pending);
    if (f.has('user')) this.member(f.api.user, source);
    for (const user of assigneesOf(f)) this.member(user, source);
    if (f.has('milestone')) this.milestone(f.api.milestone, source, repository);
    for (const label of f.list('labels')) this.#label(label, source, repository, true);
  }

  label(value: unknown, source: string, context?: string): void {
    this.#label(value, source, context, false);
  }

  labelsOfIssue(values: unknown[], source: string, repository: string, number: number): void {
    const labels = values.map((value) => this.#label(value, source, repository, false));
    this.issueLabels.push({ repository, number, labels });
  }

  milestone(value: unknown, source: string, context?: string): void {
    const f = new Fields(value, 'milestone', source);
    const repository = repositoryOf(f, 'url', context);
    if (this.sink) this.sink.scoped('milestones', prepareScoped('milestones', mapMilestone, value, source, repository));
    else this.pending.milestones.push({ api: value, source, repository });
    if (f.has('creator')) this.member(f.api.creator, source);
  }

  release(value: unknown, source: string, context?: string): void {
    const f = new Fields(value, 'release', source);
    const repository = repositoryOf(f, 'url', context);
    if (this.sink) this.sink.scoped('releases', prepareScoped('releases', mapRelease, value, source, repository));
    else this.pending.releases.push({ api: value, source, repository });
    if (f.has('author')) this.member(f.api.author, source);
  }

  membership(organization: Membership['organization'], user: unknown, source: string): void {
    this.memberships.push({ organization, memberGithubId: this.member(user, source).github_id });
  }

  finish(): GithubData {
    return { ...resolvePending(this), pullRequests: this.pullRequests };
  }

  // Labels embedded in issues may lack an id (2016 responses); those are matched by name later.
  #label(value: unknown, source: string, context: string | undefined, embedded: boolean): Pending {
    const f = new Fields(value, 'label', source);
    const pending = { api: value, source, repository: repositoryOf(f, 'url', context) };
    if (!(embedded && isIdLess(value))) this.#keepLabel(value, source, pending.repository);
    return pending;
  }

  #keepLabel(value: unknown, source: string, repository: string): void {
    const label: PendingLabel = { repository, description: describe('labels', value), fields: fieldCount(value) };
    try {
      label.record = mapLabel(value, source, 0);
    } catch (error) {
      label.error = error;
      if (this.sink) this.sink.label(label);
      else this.pending.labels.push(label);
      return;
    }
    if (this.sink) return this.sink.label(label);
    const key = `${label.record.github_id}/${repository.toLowerCase()}`;
    const at = this.#labelAt.get(key);
    if (at === undefined) this.#labelAt.set(key, this.pending.labels.push(label) - 1);
    else if (label.fields > this.pending.labels[at]!.fields) this.pending.labels[at] = label;
  }
}

function prepareIssue(value: unknown, source: string, repository: string): PendingIssue {
  const pending: PendingIssue = { repository, description: describe('issues', value), fields: fieldCount(value) };
  try {
    pending.record = mapIssue(value, source, 0);
    pending.idLessLabels = new Fields(value, 'issue', source)
      .list('labels')
      .filter(isIdLess)
      .map((label) => new Fields(label, 'label', source).requiredText('name'));
  } catch (error) {
    pending.error = error;
  }
  return pending;
}

function prepareScoped(
  kind: 'milestones' | 'releases',
  mapper: (value: unknown, source: string, repositoryGithubId: number) => MilestoneRecord | ReleaseRecord,
  value: unknown,
  source: string,
  repository: string,
): PendingScoped {
  const pending: PendingScoped = { repository, description: describe(kind, value), fields: fieldCount(value) };
  try {
    pending.record = mapper(value, source, 0);
  } catch (error) {
    pending.error = error;
  }
  return pending;
}

// The object's API address names its repository; without one, the request it answers does.
function repositoryOf(f: Fields, key: string, context: string | undefined): string {
  return repositoryOfUrl(f.api[key]) ?? context ?? f.fail(`no "${key}" naming its repository`);
}
