// Only public repositories, and what hangs from them, are ever stored. The organization's listing asks for
// `type=public`, and every record read is checked again on its own (`private`, `visibility`, and the
// `repository` a record may embed), so a token that can read private repositories never leaks one. A stored
// repository missing from the public listing is asked for: unless GitHub shows it public (moved or renamed),
// it is deleted with its issues, labels, milestones and releases.
import { bumpDataVersion } from '../../../announcements/counters.queries.ts';
import type { Db } from '../../../db/index.ts';
import type { GithubClient } from './github.client.ts';
import { deleteRepositories, storedRepositoriesOf } from './github.visibility.queries.ts';
import { lockWrites } from '../../base/write-lock.queries.ts';

type Json = Record<string, unknown>;

/** False for a record GitHub marks private or internal, or that embeds such a repository. */
export function isPublicRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  const record = value as Json;
  if (record.private === true) return false;
  if (typeof record.visibility === 'string' && record.visibility !== 'public') return false;
  return record.repository === undefined || isPublicRecord(record.repository);
}

/** A response body with the non-public records of a list left out (a single record: undefined if not public). */
export function publicOnly(body: unknown): unknown {
  if (Array.isArray(body)) return body.filter(isPublicRecord);
  return isPublicRecord(body) ? body : undefined;
}

/**
 * Deletes the stored repositories of `login` (owned by it, or named by its listing last time: `before`) that
 * are not in `listed` (the GitHub ids of its public listing now) and that GitHub does not show as public any
 * more. Returns the number deleted.
 */
export async function removeNonPublicRepositories(
  ctx: { db: Db; octokit: GithubClient },
  login: string,
  listed: ReadonlySet<number>,
  before: number[],
): Promise<number> {
  const { db, octokit } = ctx;
  const missing = (await storedRepositoriesOf(db, login, before)).filter((repo) => !listed.has(repo.githubId));
  const gone: number[] = [];
  for (const repo of missing) {
    if (!(await stillPublic(repo.owner, repo.name, repo.githubId))) gone.push(repo.githubId);
  }
  if (gone.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    await lockWrites(trx);
    const deleted = await deleteRepositories(trx, gone);
    if (deleted > 0) await bumpDataVersion(trx);
    return deleted;
  });

  async function stillPublic(owner: string, repo: string, githubId: number): Promise<boolean> {
    try {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}', { owner, repo });
      return Number((data as Json).id) === githubId && isPublicRecord(data);
    } catch (error) {
      const status = (error as { status?: number }).status;
      // 404: private to this token, or deleted; 410/451: gone or blocked. Either way not public.
      if (status === 404 || status === 410 || status === 451) return false;
      throw error;
    }
  }
}
