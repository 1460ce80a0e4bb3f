// commits_count and contributors_count of a repository, which no listing carries. Each costs one request of
// one record (`per_page=1`): the number of the `last` page its Link header names is the count. They are asked
// only when the repository was pushed since the counts were last taken (its `pushed_at` moved), so an
// unchanged repository costs nothing; `anon=1` counts contributors without a GitHub account too.
import type { RepositoryRecord } from '../../github/github.records.ts';
import type { GithubClient } from './github.client.ts';

export interface RepositoryCounts {
  commits: number;
  contributors: number;
}

/** The sync_state key holding the `pushed_at` the stored counts were taken at. */
export const countsCursor = (repository: RepositoryRecord) => `github:counts-at:${repository.github_id}`;

/** Undefined when the counts are current (nothing pushed since) or the repository is not there any more. */
export async function fetchRepositoryCounts(
  octokit: GithubClient,
  repository: RepositoryRecord,
  countedAt: string | undefined,
): Promise<RepositoryCounts | undefined> {
  if (countedAt !== undefined && countedAt === (repository.pushed_at ?? '')) return undefined;
  const params = { owner: repository.owner_login, repo: repository.name, per_page: 1 };
  const commits = await countOf(octokit, 'GET /repos/{owner}/{repo}/commits', params);
  const contributors = await countOf(octokit, 'GET /repos/{owner}/{repo}/contributors', { ...params, anon: '1' });
  if (commits === undefined || contributors === undefined) return undefined;
  return { commits, contributors };
}

async function countOf(
  octokit: GithubClient,
  route: string,
  params: Record<string, unknown>,
): Promise<number | undefined> {
  try {
    const response = await octokit.request(route, params);
    // 204: a repository without contributors (empty).
    if (response.status === 204) return 0;
    const last = /<([^<>]+)>;\s*rel="last"/.exec(response.headers.link ?? '')?.[1];
    const page = last ? Number(new URL(last).searchParams.get('page')) : NaN;
    if (Number.isSafeInteger(page) && page > 0) return page;
    return Array.isArray(response.data) ? response.data.length : 0;
  } catch (error) {
    const status = (error as { status?: number }).status;
    // 409: "Git Repository is empty".
    if (status === 409) return 0;
    if (status === 404 || status === 410 || status === 451) return undefined;
    throw error;
  }
}
