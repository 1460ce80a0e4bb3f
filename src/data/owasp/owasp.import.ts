// Placeholder replaced by the OWASP importer (issue 2).
import type { Db } from '../../db/index.ts';
import type { ResourceCounts } from '../report.ts';

export type OwaspReport = Record<string, ResourceCounts>;
export type OwaspData = unknown;

export async function readOwaspData(_dir: string): Promise<OwaspData> {
  return {};
}

export async function writeOwaspData(_db: Db, _data: OwaspData): Promise<OwaspReport> {
  return {};
}
