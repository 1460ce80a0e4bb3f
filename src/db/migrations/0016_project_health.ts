import { sql, type Kysely } from 'kysely';

// Project health (issue 47, docs/health.md).
//
// `pull_requests`: the pull requests the issues listing already returns (items with `pull_request`), kept by the GitHub
// sync and the dataset import for the three pull-request checks. No public list of them is asked for, so they are not
// a resource: no change-log trigger (migration 0014 logs published records only), no tombstones, no dump. Their
// effect is published through the health rows, which move the data version when they change.
//
// `project_health`: the latest computation per project, replaced after each import and sync (the detail reads one
// row). `project_health_history`: one point per project per day, append-only: a computation writes today's point
// (the same day's later computation revises it), never a day before the project's latest point. Keyed by the
// project's key rather than its row id, so that a project the website data drops and brings back keeps its past.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE pull_requests (
      id bigserial PRIMARY KEY,
      github_id bigint NOT NULL UNIQUE,
      repository_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
      number integer NOT NULL,
      state text NOT NULL CHECK (state IN ('open', 'closed')),
      author_login text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      closed_at timestamptz,
      merged_at timestamptz
    );
    CREATE INDEX pull_requests_repository_idx ON pull_requests (repository_id, created_at);
    CREATE TABLE project_health (
      project_id bigint PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
      score double precision NOT NULL CHECK (score >= 0 AND score <= 100),
      bucket text NOT NULL CHECK (bucket IN ('healthy', 'needs_attention', 'unhealthy')),
      coverage double precision NOT NULL CHECK (coverage >= 0 AND coverage <= 1),
      formula text NOT NULL,
      computed_at timestamptz NOT NULL,
      data_version bigint NOT NULL,
      checks jsonb NOT NULL,
      metrics jsonb NOT NULL
    );
    CREATE INDEX project_health_score_idx ON project_health (score, project_id);
    CREATE INDEX project_health_bucket_idx ON project_health (bucket);
    CREATE TABLE project_health_history (
      id bigserial PRIMARY KEY,
      project_key text NOT NULL,
      day date NOT NULL,
      score double precision NOT NULL,
      bucket text NOT NULL,
      coverage double precision NOT NULL,
      formula text NOT NULL,
      data_version bigint NOT NULL,
      UNIQUE (project_key, day)
    );
    CREATE TRIGGER cds_table_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON project_health
      FOR EACH STATEMENT EXECUTE FUNCTION cds_bump_table_version();
    CREATE TRIGGER cds_table_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON project_health_history
      FOR EACH STATEMENT EXECUTE FUNCTION cds_bump_table_version();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE project_health_history; DROP TABLE project_health; DROP TABLE pull_requests;`.execute(db);
}
