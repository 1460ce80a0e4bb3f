import { sql, type Kysely } from 'kysely';

// Accounts, sessions and API keys. Secrets are stored only as SHA-256 digests (hex):
// a session id or a raw API key never reaches the database.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      github_id bigint UNIQUE,
      login text NOT NULL,
      name text NOT NULL DEFAULT '',
      avatar_url text NOT NULL DEFAULT '',
      -- The verified primary e-mail from GitHub: private, never published.
      email text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      last_login_at timestamptz
    );
    CREATE UNIQUE INDEX users_login_uq ON users (lower(login));

    CREATE TABLE sessions (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      digest text NOT NULL UNIQUE CHECK (digest ~ '^[0-9a-f]{64}$'),
      user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX sessions_user_idx ON sessions (user_id);
    CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

    CREATE TABLE api_keys (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      uuid uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
      user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
      digest text NOT NULL UNIQUE CHECK (digest ~ '^[0-9a-f]{64}$'),
      is_revoked boolean NOT NULL DEFAULT false,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      last_used_at timestamptz
    );
    CREATE INDEX api_keys_user_active_idx ON api_keys (user_id, expires_at) WHERE NOT is_revoked;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE api_keys, sessions, users;`.execute(db);
}
