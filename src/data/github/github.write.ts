// Stores GitHub records, parents first, turning GitHub-id references into row ids. Run it inside a
// transaction. Nothing is ever deleted or deactivated (the tables have no is_active column), except
// the labels and assignees an issue no longer has.
import type { Db } from '../../db/index.ts';
import { emptyCounts } from '../base/resource-counts.ts';
import {
  batches,
  rowIdsByGithubId,
  syncPairs,
  touchRows,
  upsertByGithubId,
  type PairTable,
  type Row,
} from './github.queries.ts';
import {
  GITHUB_RESOURCES,
  type GithubData,
  type GithubReport,
  type GithubResource,
  type IssueRecord,
} from './github.records.ts';
import { writePullRequests } from './pull-requests.queries.ts';

export type { GithubCounts, GithubReport } from './github.records.ts';

type Ids = Map<number, string>;
type Pair = [string, string];

/** Stores records held in memory (a sync unit; a test's records); the dataset import's staged records: github-dataset.write.ts. */
export async function writeGithubData(db: Db, data: GithubData): Promise<GithubReport> {
  const run = new WriteRun(db, data);
  const organizations = await run.store('organizations', data.organizations, (o) => ({ ...o }));
  const members = await run.store('members', data.members, (m) => ({ ...m }));
  const owners = await run.lookup(
    'organizations',
    data.repositories.map((r) => r.owner_github_id),
  );
  const repositories = await run.store('repositories', data.repositories, ({ owner_github_id, ...r }) => ({
    ...r,
    organization_id: refer(owners, owner_github_id),
  }));
  const people = await run.lookup('members', [
    ...[...data.milestones, ...data.issues].map((record) => record.author_github_id),
    ...data.issues.flatMap((issue) => issue.assignee_github_ids),
    ...data.releases.map((release) => release.author_github_id),
  ]);
  const inRepository = inRepositoryOf(repositories);
  const milestones = await storeMilestones(run, data, people, inRepository);
  const issues = await run.store('issues', data.issues, (issue) => {
    const { repository_github_id, author_github_id, milestone_github_id, ...rest } = issue;
    const { label_github_ids: _labels, assignee_github_ids: _assignees, ...columns } = rest;
    const author_id = refer(people, author_github_id);
    const milestone_id = refer(milestones, milestone_github_id);
    return inRepository(repository_github_id, { ...columns, author_id, milestone_id });
  });
  const labels = await run.store('labels', data.labels, ({ repository_github_id, ...columns }) =>
    inRepository(repository_github_id, columns),
  );

  // By batches of issues: every pair of an issue goes with it (the links of its other labels are deleted).
  const stored = data.issues.filter((issue) => issues.has(issue.github_id));
  for (const batch of batches(stored)) {
    const issueRowIds = batch.map((issue) => issues.get(issue.github_id)!);
    await run.link(
      'issues',
      'issue_labels',
      pairs(batch, issues, (issue) => issue.label_github_ids, labels),
      issueRowIds,
    );
  }
  for (const batch of batches(stored)) {
    const issueRowIds = batch.map((issue) => issues.get(issue.github_id)!);
    await run.link(
      'issues',
      'issue_assignees',
      pairs(batch, issues, (issue) => issue.assignee_github_ids, people),
      issueRowIds,
    );
  }
  const memberships = data.organizationMembers.flatMap(({ organization_github_id, member_github_id }) => {
    const [organization, member] = [organizations.get(organization_github_id), members.get(member_github_id)];
    return organization && member ? [[organization, member] as Pair] : [];
  });
  await run.link('organizations', 'organization_members', memberships);
  await storeReleases(run, data, people, inRepository);
  await writePullRequests(db, data.pullRequests);
  return run.report;
}

type InRepository = (githubId: number, row: Row) => Row | null;

// A record whose repository is not stored cannot be (repository_id is NOT NULL): it is skipped.
function inRepositoryOf(repositories: Ids): InRepository {
  return (githubId, row) => {
    const repositoryId = repositories.get(githubId);
    return repositoryId === undefined ? null : { ...row, repository_id: repositoryId };
  };
}

function storeMilestones(run: WriteRun, data: GithubData, people: Ids, inRepository: InRepository): Promise<Ids> {
  return run.store('milestones', data.milestones, (milestone) => {
    const { repository_github_id, author_github_id, ...columns } = milestone;
    return inRepository(repository_github_id, { ...columns, author_id: refer(people, author_github_id) });
  });
}

async function storeReleases(run: WriteRun, data: GithubData, people: Ids, inRepository: InRepository): Promise<void> {
  await run.store('releases', data.releases, (release) => {
    const { repository_github_id, author_github_id, ...columns } = release;
    return inRepository(repository_github_id, { ...columns, author_id: refer(people, author_github_id) });
  });
}

/** One write of GitHub records: the report, the rows changed per table, and how rows and links are stored. */
export class WriteRun {
  readonly report: GithubReport;
  /** Row ids inserted or updated in this run, per table. */
  readonly #changed = new Map<GithubResource, Set<string>>();

  /** `totals`: records read of the resources not in `data`'s lists (staged). */
  constructor(
    readonly db: Db,
    data: GithubData,
    totals: Partial<Record<GithubResource, number>> = {},
  ) {
    const counts = (resource: GithubResource) => ({
      ...emptyCounts(),
      skipped: data.skipped[resource],
      total: totals[resource] ?? data[resource].length,
    });
    this.report = Object.fromEntries(GITHUB_RESOURCES.map((r) => [r, counts(r)])) as GithubReport;
  }

  /** Row ids inserted or updated by this run, written elsewhere (staged). */
  changed(resource: GithubResource, ids: Set<string>): void {
    this.#changed.set(resource, ids);
  }

  /** Upserts the rows `toRow` makes (null: skip the record); returns the row ids by GitHub id. */
  async store<T>(resource: GithubResource, records: T[], toRow: (record: T) => Row | null): Promise<Ids> {
    const counts = this.report[resource];
    const changed = new Set<string>();
    const ids: Ids = new Map();
    // Rows are made a batch at a time: the records are in memory already, their rows need not all be.
    for (const batch of batches(records)) {
      const rows = batch.map(toRow).filter((row): row is Row => row !== null);
      const result = await upsertByGithubId(this.db, resource, rows);
      counts.skipped += batch.length - rows.length;
      counts.inserted += result.inserted;
      counts.updated += result.updated;
      for (const id of result.changed) changed.add(id);
      for (const [githubId, id] of await rowIdsByGithubId(
        this.db,
        resource,
        rows.map((row) => row.github_id),
      ))
        ids.set(githubId, id);
    }
    this.#changed.set(resource, changed);
    return ids;
  }

  /** Row ids of stored records, including those stored by earlier runs. */
  lookup(resource: GithubResource, githubIds: (number | null)[]): Promise<Ids> {
    return rowIdsByGithubId(
      this.db,
      resource,
      githubIds.filter((id): id is number => id !== null),
    );
  }

  // A change of links is a change of their owner (the issue, the organization): a run that only
  // relabels an issue still reports it and bumps the data version.
  async link(resource: GithubResource, table: PairTable, wanted: Pair[], owners?: string[]): Promise<void> {
    const changed = this.#changed.get(resource) ?? new Set();
    const relinked = [...(await syncPairs(this.db, table, wanted, owners))].filter((id) => !changed.has(id));
    await touchRows(this.db, resource, relinked);
    this.report[resource].updated += relinked.length;
    for (const id of relinked) changed.add(id);
    this.#changed.set(resource, changed);
  }
}

function refer(ids: Ids, githubId: number | null): string | null {
  return githubId === null ? null : (ids.get(githubId) ?? null);
}

/** (issue row id, target row id) pairs; targets that are not stored are left out. */
function pairs(issues: IssueRecord[], issueIds: Ids, targetsOf: (issue: IssueRecord) => number[], targets: Ids) {
  return issues.flatMap((issue) =>
    targetsOf(issue).flatMap((githubId) => {
      const target = targets.get(githubId);
      return target === undefined ? [] : [[issueIds.get(issue.github_id)!, target] as Pair];
    }),
  );
}
