// Removal of repositories that are no longer public: the repository row and, through the foreign keys'
// ON DELETE CASCADE, its issues, labels, milestones and releases (and their links); with them go the
// sync's validators and cursors of that repository, so nothing remembers it.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';

export interface StoredRepositoryRef {
  githubId: number;
  owner: string;
  name: string;
}

/** The stored repositories owned by `login`, or among `ids` (what its listing named last time). */
export async function storedRepositoriesOf(db: Db, login: string, ids: number[]): Promise<StoredRepositoryRef[]> {
  const { rows } = await sql<{ github_id: string; owner_login: string; name: string }>`
    SELECT github_id, owner_login, name FROM repositories
    WHERE lower(owner_login) = lower(${login}) OR github_id = ANY(${ids}::bigint[])`.execute(db);
  return rows.map((row) => ({ githubId: Number(row.github_id), owner: row.owner_login, name: row.name }));
}

/** Deletes the repositories and everything stored under them; returns how many repositories went. */
export async function deleteRepositories(db: Db, githubIds: number[]): Promise<number> {
  if (githubIds.length === 0) return 0;
  const scopes = githubIds.map((id) => `github:repo:${id}`);
  const keys = githubIds.flatMap((id) => [`github:issues-since:${id}`, `github:counts-at:${id}`]);
  await sql`DELETE FROM sync_requests WHERE scope = ANY(${scopes}::text[])`.execute(db);
  await sql`DELETE FROM sync_state WHERE key = ANY(${keys}::text[])`.execute(db);
  // Their records first, each its own statement: the change log names them by their repository (migration 0014),
  // which a cascade from the repositories' deletion would have removed already.
  for (const table of ['issues', 'milestones', 'releases', 'labels'])
    await sql`DELETE FROM ${sql.table(table)} WHERE repository_id IN
      (SELECT id FROM repositories WHERE github_id = ANY(${githubIds}::bigint[]))`.execute(db);
  const result = await sql`DELETE FROM repositories WHERE github_id = ANY(${githubIds}::bigint[])`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
