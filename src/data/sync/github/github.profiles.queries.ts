// SQL of the profile step of the GitHub sync: which accounts to ask about next, and noting that they were asked.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';

export type AccountKind = 'member' | 'organization';

export interface ProfileCandidate {
  kind: AccountKind;
  githubId: number;
  login: string;
}

/**
 * Up to `limit` accounts, those never asked about first (the ones without a profile ahead of them),
 * then the ones asked longest ago. Organizations in `skip` (lower-case logins) are left out: the run
 * has just fetched their profile with the organization itself.
 */
export async function profileCandidates(db: Db, limit: number, skip: string[]): Promise<ProfileCandidate[]> {
  if (limit <= 0) return [];
  const { rows } = await sql<{ kind: AccountKind; github_id: string; login: string }>`
    SELECT kind, github_id, login FROM (
      SELECT 'member' AS kind, github_id, login, profile_checked_at, created_at IS NOT NULL AND updated_at IS NOT NULL AS known, id
      FROM members
      UNION ALL
      SELECT 'organization', github_id, login, profile_checked_at, created_at IS NOT NULL AND updated_at IS NOT NULL, id
      FROM organizations WHERE NOT (lower(login) = ANY(${skip}::text[]))
    ) AS a
    ORDER BY profile_checked_at NULLS FIRST, known, kind, id
    LIMIT ${limit}`.execute(db);
  return rows.map((row) => ({ kind: row.kind, githubId: Number(row.github_id), login: row.login }));
}

export async function markProfileChecked(db: Db, kind: AccountKind, githubId: number): Promise<void> {
  await sql`UPDATE ${sql.table(kind === 'member' ? 'members' : 'organizations')} SET profile_checked_at = now()
    WHERE github_id = ${githubId}`.execute(db);
}
