// The two units of a GitHub sync. An organization: its profile, repository listing and public members.
// A repository: its issues (incrementally, with `since`), labels, milestones and releases.
import type { Db } from '../../../db/index.ts';
import { GithubCollector } from '../../github/github.collect.ts';
import type { RepositoryRecord } from '../../github/github.records.ts';
import { collectPages, writeBatch, type BatchResult } from './github.batch.ts';
import type { GithubClient } from './github.client.ts';
import { countsCursor, fetchRepositoryCounts } from './github.counts.ts';
import { fetchConditional, freshItems, isUnchanged, type Fetched } from './github.listing.ts';
import { storedOrganization, storedRepositories } from './github.stored.queries.ts';
import { isPublicRecord, removeNonPublicRepositories } from './github.visibility.ts';
import { readRequestStates, readSyncValue, type RequestState } from '../../base/sync-state.queries.ts';

export interface UnitContext {
  db: Db;
  octokit: GithubClient;
  perPage: number;
  /** Fetch commits_count and contributors_count of repositories pushed since last time (github.counts.ts). */
  counts?: boolean;
}

export class OrganizationNotFound extends Error {}

export interface OrganizationResult {
  repositories: RepositoryRecord[];
  /** Undefined when every answer was 304: nothing was written. */
  written: BatchResult | undefined;
  /** Stored repositories deleted because they are no longer public. */
  removed: number;
}

export async function syncOrganization(ctx: UnitContext, login: string, retried = false): Promise<OrganizationResult> {
  const { db, octokit, perPage } = ctx;
  const scope = `github:org:${login.toLowerCase()}`;
  const known = retried ? new Map<string, RequestState>() : await readRequestStates(db, scope);
  const profile = await fetchConditional(octokit, 'GET /orgs/{org}', { org: login }, known, false);
  if (profile.missing) throw new OrganizationNotFound(`organization "${login}" not found on GitHub`);
  const [repos, members] = await Promise.all([
    // Public repositories only: a token that can read private ones must never publish them.
    fetchConditional(octokit, 'GET /orgs/{org}/repos', { org: login, type: 'public', per_page: perPage }, known),
    fetchConditional(octokit, 'GET /orgs/{org}/public_members', { org: login, per_page: perPage }, known),
  ]);
  for (const page of repos.pages) {
    if (page.status === 200)
      page.state.githubIds = (page.body as { id: unknown }[]).filter(isPublicRecord).map((repo) => Number(repo.id));
  }
  const stored = profile.pages[0]?.status === 304 ? await storedOrganization(db, login) : undefined;
  // A 304 vouches for rows that someone has since deleted: ask again, unconditionally.
  if (profile.pages[0]?.status === 304 && !stored && !retried) return syncOrganization(ctx, login, true);

  let written: BatchResult | undefined;
  if (![profile, repos, members].every(isUnchanged)) {
    const collector = new GithubCollector();
    if (stored) collector.organizations.add(stored, stored);
    collectPages(collector, `/orgs/${login}`, profile.pages);
    collectPages(collector, `/orgs/${login}/repos`, repos.pages);
    collectPages(collector, `/orgs/${login}/public_members`, members.pages);
    written = await writeBatch(db, {
      scope,
      data: collector.finish(),
      states: statesOf(profile, repos, members),
      values: [],
    });
  }
  const ids = repos.pages.flatMap((page) => page.state.githubIds);
  const repositories = await storedRepositories(db, ids);
  if (repositories.length < new Set(ids).size && !retried) return syncOrganization(ctx, login, true);
  const before = [...known.values()].flatMap((state) => state.githubIds);
  const removed = await removeNonPublicRepositories(ctx, login, new Set(ids), before);
  return { repositories, written, removed };
}

/** Undefined when every listing answered 304. */
export async function syncRepository(ctx: UnitContext, repository: RepositoryRecord): Promise<BatchResult | undefined> {
  const { db, octokit, perPage } = ctx;
  const scope = `github:repo:${repository.github_id}`;
  const cursor = `github:issues-since:${repository.github_id}`;
  const [known, since] = await Promise.all([readRequestStates(db, scope), readSyncValue(db, cursor)]);
  const base = { owner: repository.owner_login, repo: repository.name, per_page: perPage };
  // Newest first, so an issue updated while we page through moves to a page already read (and is
  // caught by the next run's `since`) instead of shifting an unread one out of sight.
  const issueQuery = { ...base, state: 'all', sort: 'updated', direction: 'desc', ...(since ? { since } : {}) };
  const [issues, labels, milestones, releases] = await Promise.all([
    fetchConditional(octokit, 'GET /repos/{owner}/{repo}/issues', issueQuery, known),
    fetchConditional(octokit, 'GET /repos/{owner}/{repo}/labels', base, known),
    fetchConditional(octokit, 'GET /repos/{owner}/{repo}/milestones', { ...base, state: 'all' }, known),
    fetchConditional(octokit, 'GET /repos/{owner}/{repo}/releases', base, known),
  ]);
  const countsKey = countsCursor(repository);
  const counts =
    ctx.counts === false
      ? undefined
      : await fetchRepositoryCounts(octokit, repository, await readSyncValue(db, countsKey));
  if ([issues, labels, milestones, releases].every(isUnchanged) && !counts) return undefined;

  const collector = new GithubCollector();
  const record = counts
    ? { ...repository, commits_count: counts.commits, contributors_count: counts.contributors }
    : repository;
  collector.repositories.add(record, record);
  const path = `/repos/${repository.owner_login}/${repository.name}`;
  collectPages(collector, `${path}/issues`, issues.pages);
  collectPages(collector, `${path}/labels`, labels.pages);
  collectPages(collector, `${path}/milestones`, milestones.pages);
  collectPages(collector, `${path}/releases`, releases.pages);
  const newest = latestUpdate(freshItems(issues)) ?? since;
  return writeBatch(db, {
    scope,
    data: collector.finish(),
    states: statesOf(issues, labels, milestones, releases),
    values: [
      ...(newest ? [[cursor, newest] as [string, string]] : []),
      ...(counts ? [[countsKey, repository.pushed_at ?? ''] as [string, string]] : []),
    ],
  });
}

function statesOf(...fetched: Fetched[]): RequestState[] {
  return fetched.flatMap((f) => f.pages.map((page) => page.state));
}

/** The latest `updated_at` among the issues (pull requests included: they share the listing). */
function latestUpdate(items: unknown[]): string | undefined {
  let latest: string | undefined;
  for (const item of items) {
    const value = (item as { updated_at?: unknown }).updated_at;
    if (
      typeof value === 'string' &&
      !Number.isNaN(Date.parse(value)) &&
      (!latest || Date.parse(value) > Date.parse(latest))
    )
      latest = value;
  }
  return latest;
}
