// One unit of a GitHub sync (an organization, or one repository with its issues, labels, milestones and
// releases), committed in one transaction with what its requests returned: after a crash, a unit is
// either wholly stored with its ETags and cursor, or not at all, and the next run redoes it.
import type { Db } from '../../../db/index.ts';
import { bumpDataVersion } from '../../../announcements/counters.queries.ts';
import { changedRows } from '../../base/resource-counts.ts';
import type { GithubCollector } from '../../github/github.collect.ts';
import type { GithubData, MemberRecord, OrganizationRecord } from '../../github/github.records.ts';
import { collectResponse } from '../../github/github.responses.ts';
import { writeGithubData, type GithubReport } from '../../github/github.write.ts';
import { storedAccounts, storedRepositories } from './github.stored.queries.ts';
import { publicOnly } from './github.visibility.ts';
import type { FetchedPage } from './github.listing.ts';
import { lockWrites } from '../../base/write-lock.queries.ts';
import { replaceRequestStates, writeSyncValue, type RequestState } from '../../base/sync-state.queries.ts';

export interface Batch {
  /** The sync_requests scope whose states this unit replaces. */
  scope: string;
  data: GithubData;
  states: RequestState[];
  /** sync_state values (cursors) to store with the records. */
  values: [key: string, value: string][];
}

export interface BatchResult {
  report: GithubReport;
  changed: boolean;
}

/**
 * The records of the pages that came with a body, read as the import reads recorded responses; records of
 * private or internal repositories are left out (github.visibility.ts).
 */
export function collectPages(collector: GithubCollector, path: string, pages: FetchedPage[]): void {
  for (const page of pages) {
    const body = page.status === 200 ? publicOnly(page.body) : undefined;
    if (body !== undefined) collectResponse(collector, `GET ${path}`, body, page.url);
  }
}

export async function writeBatch(db: Db, batch: Batch): Promise<BatchResult> {
  return db.transaction().execute(async (trx) => {
    await lockWrites(trx);
    await keepStoredProfiles(trx, batch.data);
    await keepStoredCounts(trx, batch.data);
    const report = await writeGithubData(trx, batch.data);
    await replaceRequestStates(trx, batch.scope, batch.states);
    for (const [key, value] of batch.values) await writeSyncValue(trx, key, value);
    const changed = changedRows(report) > 0;
    if (changed) await bumpDataVersion(trx);
    return { report, changed };
  });
}

// Listings embed accounts as stubs (login, id, avatar). Written as they are, they would blank the name,
// bio and counts of a full profile stored before (by the import, say). Stubs are the ones without a
// creation date; they only bring the login and addresses, the rest stays as stored.
async function keepStoredProfiles(db: Db, data: GithubData): Promise<void> {
  const stubIds = <T extends { github_id: number; created_at: string | null }>(records: T[]) =>
    records.filter((record) => record.created_at === null).map((record) => record.github_id);
  const members = await storedAccounts(db, 'members', stubIds(data.members));
  const organizations = await storedAccounts(db, 'organizations', stubIds(data.organizations));
  const merge = <T extends MemberRecord | OrganizationRecord>(record: T, stored: T | undefined): T =>
    stored && record.created_at === null
      ? {
          ...stored,
          login: record.login,
          avatar_url: record.avatar_url || stored.avatar_url,
          url: record.url || stored.url,
        }
      : record;
  data.members = data.members.map((record) => merge(record, members.get(record.github_id)));
  data.organizations = data.organizations.map((record) => merge(record, organizations.get(record.github_id)));
}

// Listings carry no commit or contributor counts (the mappers write 0): the counts a repository unit took
// (github.counts.ts) stay until it takes new ones.
async function keepStoredCounts(db: Db, data: GithubData): Promise<void> {
  const bare = (record: GithubData['repositories'][number]) =>
    record.commits_count === 0 && record.contributors_count === 0;
  const ids = data.repositories.filter(bare).map((record) => record.github_id);
  if (ids.length === 0) return;
  const stored = new Map((await storedRepositories(db, ids)).map((record) => [record.github_id, record]));
  data.repositories = data.repositories.map((record) => {
    const known = stored.get(record.github_id);
    return known && bare(record)
      ? { ...record, commits_count: known.commits_count, contributors_count: known.contributors_count }
      : record;
  });
}
