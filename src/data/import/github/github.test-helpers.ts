// What the tests of the GitHub import share (github.import.test.ts, github.stage.test.ts).
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { PairTable } from '../../github/github.queries.ts';

export type Json = Record<string, unknown>;

/** The tables of the GitHub records, then the tables of the pairs that link them. */
const RECORD_TABLES = [
  'organizations',
  'members',
  'repositories',
  'milestones',
  'issues',
  'labels',
  'releases',
] as const;
const PAIR_TABLES: readonly PairTable[] = ['organization_members', 'issue_labels', 'issue_assignees'];
export type GithubTable = (typeof RECORD_TABLES)[number] | PairTable;

/** Every row of every GitHub table, ordered by the first two columns. */
export async function githubRows(db: Db): Promise<Record<GithubTable, Json[]>> {
  const tables = [...RECORD_TABLES, ...PAIR_TABLES];
  const read = async (table: GithubTable) =>
    (await sql.raw<Json>(`SELECT * FROM ${table} ORDER BY 1, 2`).execute(db)).rows;
  return Object.fromEntries(
    await Promise.all(tables.map(async (table) => [table, await read(table)] as const)),
  ) as Record<GithubTable, Json[]>;
}
