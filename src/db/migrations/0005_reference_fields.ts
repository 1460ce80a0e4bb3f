import { sql, type Kysely } from 'kysely';

// What the reference's client needs beyond the first data model (issue 11): project types as the
// reference's enumeration, the repositories a project names (for its stars), leaders' GitHub logins
// from the website data, and when the GitHub sync last asked for an account's profile.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The website's free-text type becomes the reference's choice; anything else is 'other' (as there).
    UPDATE projects SET type = CASE WHEN lower(btrim(type)) IN ('code', 'documentation', 'other', 'tool')
      THEN lower(btrim(type)) ELSE 'other' END;
    ALTER TABLE projects ALTER COLUMN type SET DEFAULT 'other';
    ALTER TABLE projects ADD CONSTRAINT projects_type_check CHECK (type IN ('code', 'documentation', 'other', 'tool'));
    CREATE INDEX projects_type_idx ON projects (type);

    -- Lower-case owner/name of the GitHub repositories a project names: its website repository and
    -- those of its code URLs. Filled by the next import or website sync; the website repository now.
    ALTER TABLE projects ADD COLUMN repository_paths jsonb NOT NULL DEFAULT '[]';
    UPDATE projects SET repository_paths = jsonb_build_array('owasp/www-project-' || lower(key));

    -- The leader's GitHub login when the website names the profile; '' otherwise.
    ALTER TABLE leaders ADD COLUMN github_login text NOT NULL DEFAULT '';
    CREATE INDEX members_name_idx ON members (lower(name));

    -- When the GitHub sync last asked for the profile (null: never); the oldest are asked first.
    ALTER TABLE members ADD COLUMN profile_checked_at timestamptz;
    ALTER TABLE organizations ADD COLUMN profile_checked_at timestamptz;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE organizations DROP COLUMN profile_checked_at;
    ALTER TABLE members DROP COLUMN profile_checked_at;
    DROP INDEX members_name_idx;
    ALTER TABLE leaders DROP COLUMN github_login;
    ALTER TABLE projects DROP COLUMN repository_paths;
    DROP INDEX projects_type_idx;
    ALTER TABLE projects DROP CONSTRAINT projects_type_check;
    ALTER TABLE projects ALTER COLUMN type SET DEFAULT '';
  `.execute(db);
}
