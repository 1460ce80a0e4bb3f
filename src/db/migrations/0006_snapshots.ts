import { sql, type Kysely } from 'kysely';

// The reference's snapshots: one row per completed calendar month (UTC) in which at least one record
// was first created, with the number of new records of each kind. Rebuilt from the stored records by
// src/data/snapshots (after every import and sync, and by `cds snapshots rebuild`); the sub-lists read
// the records themselves by creation date, between start_at and end_at.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE snapshots (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL CHECK (key ~ '^[0-9]{4}-[0-9]{2}$'),
      title text NOT NULL,
      start_at timestamptz NOT NULL,
      end_at timestamptz NOT NULL CHECK (end_at > start_at),
      new_chapters_count integer NOT NULL DEFAULT 0 CHECK (new_chapters_count >= 0),
      new_issues_count integer NOT NULL DEFAULT 0 CHECK (new_issues_count >= 0),
      new_projects_count integer NOT NULL DEFAULT 0 CHECK (new_projects_count >= 0),
      new_releases_count integer NOT NULL DEFAULT 0 CHECK (new_releases_count >= 0),
      new_users_count integer NOT NULL DEFAULT 0 CHECK (new_users_count >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX snapshots_key_uq ON snapshots (key);
    CREATE INDEX snapshots_created_at_idx ON snapshots (created_at, id);
    CREATE INDEX snapshots_updated_at_idx ON snapshots (updated_at, id);
    CREATE INDEX snapshots_start_at_idx ON snapshots (start_at, id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE snapshots;`.execute(db);
}
