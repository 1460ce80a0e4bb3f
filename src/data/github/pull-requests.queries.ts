// Stores the pull requests of issue listings (migration 0016): upserted by GitHub id into the repository their
// address names, when it is stored; never deleted but with their repository. Not a published record: no count in
// the run's report, no change of the data version of its own (the health computed after the run shows them).
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import type { PullRequestRecord } from './github.records.ts';

const BATCH = 1000;

/** The newest version of each pull request (pages may overlap while GitHub's order moves). */
function newestOf(records: readonly PullRequestRecord[]): PullRequestRecord[] {
  const byId = new Map<number, PullRequestRecord>();
  for (const record of records) {
    const known = byId.get(record.github_id);
    if (!known || Date.parse(record.updated_at) >= Date.parse(known.updated_at)) byId.set(record.github_id, record);
  }
  return [...byId.values()];
}

/** Returns how many rows were inserted or changed. */
export async function writePullRequests(db: Db, records: readonly PullRequestRecord[] = []): Promise<number> {
  const newest = newestOf(records);
  let written = 0;
  for (let start = 0; start < newest.length; start += BATCH) {
    const batch = newest.slice(start, start + BATCH);
    const result = await sql`
      INSERT INTO pull_requests (github_id, repository_id, number, state, author_login, created_at, updated_at,
        closed_at, merged_at)
      SELECT r.github_id, repo.id, r.number, r.state, r.author_login, r.created_at, r.updated_at, r.closed_at,
        r.merged_at
      FROM jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) AS r (github_id bigint, repository text, number int,
        state text, author_login text, created_at timestamptz, updated_at timestamptz, closed_at timestamptz,
        merged_at timestamptz)
      CROSS JOIN LATERAL (
        SELECT id FROM repositories
        WHERE lower(owner_login) = split_part(r.repository, '/', 1) AND lower(name) = split_part(r.repository, '/', 2)
        ORDER BY id LIMIT 1
      ) AS repo
      ON CONFLICT (github_id) DO UPDATE SET repository_id = excluded.repository_id, number = excluded.number,
        state = excluded.state, author_login = excluded.author_login, created_at = excluded.created_at,
        updated_at = excluded.updated_at, closed_at = excluded.closed_at, merged_at = excluded.merged_at
      WHERE (pull_requests.repository_id, pull_requests.number, pull_requests.state, pull_requests.author_login,
        pull_requests.created_at, pull_requests.updated_at, pull_requests.closed_at, pull_requests.merged_at)
        IS DISTINCT FROM (excluded.repository_id, excluded.number, excluded.state, excluded.author_login,
        excluded.created_at, excluded.updated_at, excluded.closed_at, excluded.merged_at)`.execute(db);
    written += Number(result.numAffectedRows ?? 0);
  }
  return written;
}
