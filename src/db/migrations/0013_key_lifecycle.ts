import { sql, type Kysely } from 'kysely';

// The key lifecycle of issue 30. Rotation: the key that replaced this one (`replaced_by`), so that a key is rotated
// once and the old one's short life (its expiry moved to the end of the grace period) can be told apart from an
// ordinary expiry. Leaks: where GitHub's secret scanning found the key published (`leak_url`, `leak_source`,
// `leak_reported_at`), shown to its owner beside the revocation. Never the raw key: only its digest is stored.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE api_keys
      ADD COLUMN replaced_by bigint REFERENCES api_keys (id) ON DELETE SET NULL,
      ADD COLUMN leak_url text CHECK (char_length(leak_url) <= 2048),
      ADD COLUMN leak_source text CHECK (char_length(leak_source) <= 100),
      ADD COLUMN leak_reported_at timestamptz;
    CREATE INDEX api_keys_leaked_idx ON api_keys (user_id, leak_reported_at) WHERE leak_reported_at IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX api_keys_leaked_idx;
    ALTER TABLE api_keys DROP COLUMN replaced_by, DROP COLUMN leak_url, DROP COLUMN leak_source, DROP COLUMN leak_reported_at;
  `.execute(db);
}
