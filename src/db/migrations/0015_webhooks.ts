import { sql, type Kysely } from 'kysely';

// Webhooks (issue 43, docs/changes.md "Webhooks"): endpoints owned by a signed-in user, each following the change log
// with a cursor of its own (the last change id delivered), and the attempts of its deliveries.
//
// Secrets: the HMAC of Standard Webhooks needs the secret itself, so it cannot be stored as a digest like an API key.
// It is stored encrypted (AES-256-GCM, webhooks/webhook-secrets.ts) with WEBHOOK_SECRETS_KEY, which the database
// never holds: a copy of the database alone signs nothing (docs/security.md).
//
// Delivery state lives on the endpoint's row: whoever holds its lease (`lease_owner` until `lease_until`, taken by one
// short UPDATE … FOR UPDATE SKIP LOCKED: no session lock, so it works through PgBouncer in transaction mode) sends its
// next changes; `next_attempt_at` holds the backoff of a failing endpoint. A replay is a range of ids sent again
// before the live changes (`replay_cursor` up to `replay_until`).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhooks (
      id bigserial PRIMARY KEY,
      uuid uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
      user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      url text NOT NULL CHECK (char_length(url) <= 2048),
      resources text[] NOT NULL DEFAULT '{}',
      types text[] NOT NULL DEFAULT '{}',
      description text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
      secret_sealed text NOT NULL,
      previous_secret_sealed text,
      previous_secret_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      delivered_through bigint NOT NULL,
      replay_cursor bigint,
      replay_until bigint,
      next_attempt_at timestamptz,
      failing_since timestamptz,
      failed_attempts integer NOT NULL DEFAULT 0,
      lease_owner text,
      lease_until timestamptz,
      disabled_at timestamptz,
      disabled_reason text CHECK (char_length(disabled_reason) <= 1000)
    );
    CREATE INDEX webhooks_user_idx ON webhooks (user_id);
    CREATE INDEX webhooks_due_idx ON webhooks (next_attempt_at) WHERE disabled_at IS NULL;
    CREATE TABLE webhook_attempts (
      id bigserial PRIMARY KEY,
      webhook_id bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      change_id bigint NOT NULL,
      status text NOT NULL CHECK (status IN ('delivered', 'failed', 'refused')),
      response_code integer,
      response_body text CHECK (octet_length(response_body) <= 1024),
      error text CHECK (char_length(error) <= 500),
      attempted_at timestamptz NOT NULL,
      next_attempt_at timestamptz
    );
    CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (webhook_id, id DESC);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE webhook_attempts; DROP TABLE webhooks;`.execute(db);
}
