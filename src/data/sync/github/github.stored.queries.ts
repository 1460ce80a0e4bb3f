// Stored GitHub rows read back as the records the writer takes. A page answered 304 carries no body,
// yet the writer needs the repository (or organization) its records hang from: the stored row is it.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { MemberRecord, OrganizationRecord, RepositoryRecord } from '../../github/github.records.ts';

type Raw = Record<string, unknown>;

const ORGANIZATION_COLUMNS = [
  'github_id',
  'login',
  'name',
  'description',
  'company',
  'location',
  'email',
  'avatar_url',
  'url',
  'followers_count',
  'public_repositories_count',
  'created_at',
  'updated_at',
] as const;
const MEMBER_COLUMNS = [
  'github_id',
  'login',
  'name',
  'avatar_url',
  'url',
  'bio',
  'company',
  'location',
  'title',
  'twitter_username',
  'followers_count',
  'following_count',
  'public_repositories_count',
  'created_at',
  'updated_at',
] as const;

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

export async function storedRepositories(db: Db, ids: number[]): Promise<RepositoryRecord[]> {
  if (ids.length === 0) return [];
  // The writer only uses the owner's id to find its organization row; 0 (no one) keeps it unset.
  const { rows } = await sql<Raw>`
    SELECT r.github_id, r.owner_login, coalesce(o.github_id, m.github_id, 0) AS owner_github_id, r.name, r.description,
      r.homepage, r.language, r.default_branch, r.url, r.license, r.topics, r.is_archived, r.is_fork, r.commits_count,
      r.contributors_count, r.forks_count, r.stars_count, r.watchers_count, r.open_issues_count, r.size, r.pushed_at,
      r.created_at, r.updated_at
    FROM repositories r
    LEFT JOIN organizations o ON o.id = r.organization_id
    LEFT JOIN members m ON r.organization_id IS NULL AND lower(m.login) = lower(r.owner_login)
    WHERE r.github_id = ANY(${ids}::bigint[])
    ORDER BY r.github_id`.execute(db);
  return rows.map((row) => asRecord<RepositoryRecord>(row));
}
