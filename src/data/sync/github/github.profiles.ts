// The profile step of a GitHub sync. Listings embed accounts as stubs (login, id, avatar), so a member
// or an organization first met there has no profile: no name, no counts, no GitHub dates, and it is not
// published until it has one. Each run asks `GET /users/{login}` or `GET /orgs/{login}` for a bounded
// number of accounts, those never asked first, then the ones asked longest ago; with the ETag of the
// last answer, so a profile that did not change costs a 304 (which GitHub does not count).
import type { Db } from '../../../db/index.ts';
import { ImportError } from '../../base/import-error.ts';
import { GithubCollector } from '../../github/github.collect.ts';
import { collectPages, writeBatch, type BatchResult } from './github.batch.ts';
import type { GithubClient } from './github.client.ts';
import { fetchConditional } from './github.listing.ts';
import { markProfileChecked, profileCandidates, type ProfileCandidate } from './github.profiles.queries.ts';
import { readRequestStates } from '../../base/sync-state.queries.ts';
import type { SyncLog } from '../../base/sync-log.ts';

/** Profile requests per run unless the caller says otherwise. */
export const PROFILE_REQUESTS = 100;

export interface ProfileReport {
  /** Profiles asked for (one request each, retries aside). */
  asked: number;
  /** Answered with a profile (200), of which `changed` changed stored rows. */
  fetched: number;
  changed: number;
  notModified: number;
  /** Gone (404), renamed to another account, or unreadable: left as stored, asked again in turn. */
  missing: number;
}

export interface ProfileOptions {
  db: Db;
  octokit: GithubClient;
  log: SyncLog;
  /** At most this many requests. */
  budget: number;
  /** Organizations whose profile this run already fetched (lower-case logins). */
  skip: string[];
  concurrency: number;
  signal?: AbortSignal | undefined;
  /** Called with each written batch (for the run's counts). */
  onWritten: (result: BatchResult) => void;
  each: <T>(
    items: T[],
    limit: number,
    signal: AbortSignal | undefined,
    work: (item: T) => Promise<void>,
  ) => Promise<void>;
}

export async function syncProfiles(options: ProfileOptions): Promise<ProfileReport> {
  const { db, budget, skip } = options;
  const report: ProfileReport = { asked: 0, fetched: 0, changed: 0, notModified: 0, missing: 0 };
  const candidates = await profileCandidates(db, budget, skip);
  await options.each(candidates, options.concurrency, options.signal, async (candidate) => {
    report.asked++;
    const outcome = await syncProfile(options, candidate);
    if (outcome === 'missing') report.missing++;
    else if (outcome === 'not-modified') report.notModified++;
    else {
      report.fetched++;
      if (outcome.changed) report.changed++;
      options.onWritten(outcome);
    }
    await markProfileChecked(db, candidate.kind, candidate.githubId);
  });
  return report;
}

async function syncProfile(
  options: ProfileOptions,
  candidate: ProfileCandidate,
): Promise<BatchResult | 'missing' | 'not-modified'> {
  const { db, octokit, log } = options;
  const { kind, githubId, login } = candidate;
  const scope = `github:profile:${kind}:${githubId}`;
  const known = await readRequestStates(db, scope);
  const fetched =
    kind === 'member'
      ? await fetchConditional(octokit, 'GET /users/{username}', { username: login }, known, false)
      : await fetchConditional(octokit, 'GET /orgs/{org}', { org: login }, known, false);
  const page = fetched.pages[0];
  if (fetched.missing || !page) return 'missing';
  if (page.status === 304) return 'not-modified';
  // The login may now name another account (renamed, then taken): that one is not the account we know.
  const body = page.body as { id?: unknown; type?: unknown };
  if (Number(body.id) !== githubId || (kind === 'member') === (body.type === 'Organization')) {
    log.warn(`${kind} ${login}: GitHub's profile of that login is another account now; left as stored`);
    return 'missing';
  }
  try {
    const collector = new GithubCollector();
    collectPages(collector, kind === 'member' ? `/users/${login}` : `/orgs/${login}`, [page]);
    return await writeBatch(db, { scope, data: collector.finish(), states: [page.state], values: [] });
  } catch (error) {
    if (!(error instanceof ImportError)) throw error;
    log.warn(`${kind} ${login}: profile skipped: ${error.message}`);
    return 'missing';
  }
}
