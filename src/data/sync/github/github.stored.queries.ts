// Stored GitHub rows read back as the records the writer takes. A page answered 304 carries no body,
// yet the writer needs the repository (or organization) its records hang from: the stored row is it.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { MEMBER_COLUMNS, ORGANIZATION_COLUMNS, REPOSITORY_COLUMNS } from '../../github/github.columns.ts';
import type { MemberRecord, OrganizationRecord, RepositoryRecord } from '../../github/github.records.ts';

type Raw = Record<string, unknown>;

// node-postgres gives bigint as text and timestamptz as Date; records hold numbers and ISO text.
function asRecord<T>(row: Raw): T {
  const record: Raw = {};
  for (const [key, value] of Object.entries(row)) {
    record[key] = value instanceof Date ? value.toISOString() : key.endsWith('github_id') ? Number(value) : value;
  }
  return record as T;
}

const columns = (names: readonly string[], table: string) => sql.join(names.map((name) => sql.ref(`${table}.${name}`)));

export async function storedOrganization(db: Db, login: string): Promise<OrganizationRecord | undefined> {
  const { rows } = await sql<Raw>`
    SELECT ${columns(ORGANIZATION_COLUMNS, 'o')} FROM organizations o WHERE lower(o.login) = lower(${login})`.execute(
    db,
  );
  return rows[0] && asRecord<OrganizationRecord>(rows[0]);
}

/** Stored accounts by GitHub id, as records. */
export async function storedAccounts(db: Db, table: 'members', ids: number[]): Promise<Map<number, MemberRecord>>;
export async function storedAccounts(
  db: Db,
  table: 'organizations',
  ids: number[],
): Promise<Map<number, OrganizationRecord>>;
export async function storedAccounts(
  db: Db,
  table: 'members' | 'organizations',
  ids: number[],
): Promise<Map<number, MemberRecord | OrganizationRecord>> {
  if (ids.length === 0) return new Map();
  const names = table === 'members' ? MEMBER_COLUMNS : ORGANIZATION_COLUMNS;
  const { rows } = await sql<Raw>`
    SELECT ${columns(names, 'a')} FROM ${sql.table(table)} a WHERE a.github_id = ANY(${ids}::bigint[])`.execute(db);
  return new Map(
    rows.map((row) => {
      const record = asRecord<MemberRecord | OrganizationRecord>(row);
      return [record.github_id, record];
    }),
  );
}

/** The repository's columns after `github_id` and `owner_login`, which storedRepositories selects first. */
const REPOSITORY_FIELDS = REPOSITORY_COLUMNS.filter((name) => name !== 'github_id' && name !== 'owner_login');

export async function storedRepositories(db: Db, ids: number[]): Promise<RepositoryRecord[]> {
  if (ids.length === 0) return [];
  // The writer only uses the owner's id to find its organization row; 0 (no one) keeps it unset.
  const { rows } = await sql<Raw>`
    SELECT r.github_id, r.owner_login, coalesce(o.github_id, m.github_id, 0) AS owner_github_id,
      ${columns(REPOSITORY_FIELDS, 'r')}
    FROM repositories r
    LEFT JOIN organizations o ON o.id = r.organization_id
    LEFT JOIN members m ON r.organization_id IS NULL AND lower(m.login) = lower(r.owner_login)
    WHERE r.github_id = ANY(${ids}::bigint[])
    ORDER BY r.github_id`.execute(db);
  return rows.map((row) => asRecord<RepositoryRecord>(row));
}
