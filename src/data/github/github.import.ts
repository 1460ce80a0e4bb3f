// Placeholder replaced by the GitHub importer (issue 2).
import type { Db } from '../../db/index.ts';
import type { ResourceCounts } from '../report.ts';

export type GithubReport = Record<string, ResourceCounts>;
export type GithubData = unknown;

export async function readGithubData(_dir: string): Promise<GithubData> {
  return {};
}

export async function writeGithubData(_db: Db, _data: GithubData): Promise<GithubReport> {
  return {};
}
