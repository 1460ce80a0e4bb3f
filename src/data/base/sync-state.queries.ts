// SQL of what the syncs remember (migration 0004), and of the lease that keeps scheduled runs apart (the write lock
// that keeps writers apart is write-lock.queries.ts).
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';

/** What the last fetch of one URL told us, for a conditional request next time. */
export interface RequestState {
  url: string;
  etag: string;
  lastModified: string;
  /** The next page, as the Link header named it; '' on the last page. */
  nextUrl: string;
  /** GitHub ids of the records on the page (organization repository listings only). */
  githubIds: number[];
}

export async function readRequestStates(db: Db, scope: string): Promise<Map<string, RequestState>> {
  const { rows } = await sql<{
    url: string;
    etag: string;
    last_modified: string;
    next_url: string;
    github_ids: string[];
  }>`
    SELECT url, etag, last_modified, next_url, github_ids FROM sync_requests WHERE scope = ${scope}`.execute(db);
  return new Map(
    rows.map((row) => [
      row.url,
      {
        url: row.url,
        etag: row.etag,
        lastModified: row.last_modified,
        nextUrl: row.next_url,
        githubIds: row.github_ids.map(Number),
      },
    ]),
  );
}

/** Makes the scope's stored states exactly `states`: URLs not fetched this time are forgotten. */
export async function replaceRequestStates(db: Db, scope: string, states: RequestState[]): Promise<void> {
  const rows = states.map((s) => ({
    url: s.url,
    etag: s.etag,
    last_modified: s.lastModified,
    next_url: s.nextUrl,
    github_ids: s.githubIds,
  }));
  await sql`DELETE FROM sync_requests WHERE scope = ${scope} AND NOT (url = ANY(${rows.map((r) => r.url)}::text[]))`.execute(
    db,
  );
  if (rows.length === 0) return;
  await sql`
    INSERT INTO sync_requests AS t (url, scope, etag, last_modified, next_url, github_ids)
    SELECT s.url, ${scope}, s.etag, s.last_modified, s.next_url, s.github_ids
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS s (url text, etag text, last_modified text, next_url text, github_ids bigint[])
    ON CONFLICT (url) DO UPDATE SET scope = excluded.scope, etag = excluded.etag, last_modified = excluded.last_modified,
      next_url = excluded.next_url, github_ids = excluded.github_ids, fetched_at = now()
    WHERE (t.scope, t.etag, t.last_modified, t.next_url, t.github_ids)
      IS DISTINCT FROM (excluded.scope, excluded.etag, excluded.last_modified, excluded.next_url, excluded.github_ids)
  `.execute(db);
}

export async function readSyncValue(db: Db, key: string): Promise<string | undefined> {
  const { rows } = await sql<{ value: string }>`SELECT value FROM sync_state WHERE key = ${key}`.execute(db);
  return rows[0]?.value;
}

export async function writeSyncValue(db: Db, key: string, value: string): Promise<void> {
  await sql`
    INSERT INTO sync_state (key, value) VALUES (${key}, ${value})
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()
    WHERE sync_state.value IS DISTINCT FROM excluded.value`.execute(db);
}

/**
 * Records a run as started now unless one started less than `minGapMs` ago; true when this caller
 * may run. One statement, on the database's clock, so instances never disagree about the time.
 */
export async function claimRun(db: Db, key: string, minGapMs: number): Promise<boolean> {
  const { rows } = await sql`
    INSERT INTO sync_state AS t (key, value) VALUES (${key}, now()::text)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()
    WHERE t.value::timestamptz <= now() - make_interval(secs => ${minGapMs / 1000})
    RETURNING key`.execute(db);
  return rows.length > 0;
}

/** A lease: who holds it and until when (the database's clock, ISO 8601). */
export interface Lease {
  holder: string;
  until: string;
}

/**
 * Takes the lease `key` for `holder` for `ttlMs` from now, or extends it when `holder` holds it already; while
 * another holder's lease runs, returns that lease instead (`taken: false`). A row of sync_state rather than a session
 * lock, which through a pooler in transaction mode would be taken and released in different sessions (issue 29): a
 * holder that dies without letting go holds it `ttlMs` at most. One statement, on the database's clock.
 */
export async function takeLease(
  db: Db,
  key: string,
  holder: string,
  ttlMs: number,
): Promise<{ taken: boolean; lease: Lease | undefined }> {
  // The second SELECT reads the row as it was before the INSERT: the lease that kept this holder out.
  const { rows } = await sql<{ value: string; taken: boolean }>`
    WITH taken AS (
      INSERT INTO sync_state AS t (key, value)
      VALUES (${key}, json_build_object('holder', ${holder}::text, 'until', now() + make_interval(secs => ${ttlMs / 1000}))::text)
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()
      WHERE t.value::jsonb ->> 'holder' = ${holder} OR (t.value::jsonb ->> 'until')::timestamptz <= now()
      RETURNING value
    )
    SELECT value, true AS taken FROM taken
    UNION ALL
    SELECT value, false FROM sync_state WHERE key = ${key} AND NOT EXISTS (SELECT 1 FROM taken)`.execute(db);
  const row = rows[0];
  return { taken: row?.taken === true, lease: row ? (JSON.parse(row.value) as Lease) : undefined };
}

/** Lets go of the lease `key` if `holder` still holds it. */
export async function releaseLease(db: Db, key: string, holder: string): Promise<void> {
  await sql`DELETE FROM sync_state WHERE key = ${key} AND value::jsonb ->> 'holder' = ${holder}`.execute(db);
}
