import { sql, type Kysely } from 'kysely';

// The contribute filters of the issues list and GET /api/v0/contribute/ (issue 47; docs/contribute.md). 0016 is left
// to the health work of the same issue, written at the same time.
//
// A label's key: its name lower-cased without spaces, hyphens and underscores, so that `good-first-issue`,
// `Good First Issue` and `good_first_issue` are one label. A SQL function the planner inlines, so that the index on
// it serves `cds_label_key(name) IN (…)`; the API's own normalization (src/api/v0/issues/issue-filters.queries.ts) is the same rule.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION cds_label_key(name text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT lower(regexp_replace(name, '[[:space:]_-]+', '', 'g')) $$;
    CREATE INDEX labels_key_idx ON labels (cds_label_key(name), id);
    -- The issues of a few labels, from the label (issue_labels_label_idx has the label alone: a heap visit per row).
    CREATE INDEX issue_labels_label_issue_idx ON issue_labels (label_id, issue_id);
    DROP INDEX issue_labels_label_idx;
    -- The repositories of a language.
    CREATE INDEX repositories_language_idx ON repositories ((lower(language)), id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX repositories_language_idx;
    CREATE INDEX issue_labels_label_idx ON issue_labels (label_id);
    DROP INDEX issue_labels_label_issue_idx;
    DROP INDEX labels_key_idx;
    DROP FUNCTION cds_label_key(text);
  `.execute(db);
}
