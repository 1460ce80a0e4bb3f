import { sql, type Kysely } from 'kysely';

// What the GitHub and website syncs remember between runs. Rows change in the same transaction as the
// records they describe, so a crash never leaves a validator that claims data the database lacks.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- One row per URL fetched: its validators for conditional requests, the next page its Link
    -- header named, and (for repository listings) the GitHub ids of the records on that page.
    CREATE TABLE IF NOT EXISTS sync_requests (
      url text PRIMARY KEY,
      scope text NOT NULL,
      etag text NOT NULL DEFAULT '',
      last_modified text NOT NULL DEFAULT '',
      next_url text NOT NULL DEFAULT '',
      github_ids bigint[] NOT NULL DEFAULT '{}',
      fetched_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX IF NOT EXISTS sync_requests_scope_idx ON sync_requests (scope);

    -- Cursors (the since of each repository's issue listing) and the scheduler's last run.
    CREATE TABLE IF NOT EXISTS sync_state (
      key text PRIMARY KEY,
      value text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE sync_state, sync_requests;`.execute(db);
}
