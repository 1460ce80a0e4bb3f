import { sql, type Kysely } from 'kysely';

// The issues GET /api/v0/contribute/ starts from (issue 47; docs/contribute.md): every open issue with no assignee
// that carries a beginner label, kept by triggers as issues, their labels and assignees are written (by an import, a
// sync, or by hand), so that the list reads a few thousand rows rather than finding them among a million issues.
// Which repositories count (active projects, not archived) changes with the projects and stays in the list's query.
//
// The beginner labels by key (cds_label_key, 0017), as src/api/v0/contribute/contribute.labels.ts lists them on the
// day this was written: a change to that list is a new migration that redefines cds_is_beginner_label and rebuilds the
// table (contribute.test.ts compares the two).
const BEGINNER_KEYS = [
  'goodfirstissue',
  'goodfirstbug',
  'goodfirstcontribution',
  'goodfirstpr',
  'helpwanted',
  'beginner',
  'beginnerfriendly',
  'beginners',
  'firsttimersonly',
  'firsttimer',
  'easy',
  'easyfix',
  'upforgrabs',
  'starter',
  'newcomer',
  'newcomers',
  'lowhangingfruit',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  const keys = sql.join(BEGINNER_KEYS.map((key) => sql.lit(key)));
  await sql`
    CREATE FUNCTION cds_is_beginner_label(name text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT cds_label_key(name) IN (${keys}) $$;

    CREATE TABLE contribute_candidates (
      issue_id bigint PRIMARY KEY REFERENCES issues (id) ON DELETE CASCADE,
      repository_id bigint NOT NULL,
      created_at timestamptz NOT NULL
    );
    -- The list newest first (an index walk that stops after the page), and a project's repositories.
    CREATE INDEX contribute_candidates_created_at_idx ON contribute_candidates (created_at, issue_id)
      INCLUDE (repository_id);
    CREATE INDEX contribute_candidates_repository_idx ON contribute_candidates (repository_id, created_at, issue_id);
    CREATE TRIGGER cds_table_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON contribute_candidates
      FOR EACH STATEMENT EXECUTE FUNCTION cds_bump_table_version();

    -- The rule, for the issues named: each is a candidate after this exactly when it is open, unassigned and labelled.
    CREATE FUNCTION cds_contribute_refresh(ids bigint[]) RETURNS void LANGUAGE sql AS $$
      DELETE FROM contribute_candidates WHERE issue_id = ANY (ids);
      INSERT INTO contribute_candidates (issue_id, repository_id, created_at)
      SELECT i.id, i.repository_id, i.created_at FROM issues i
      WHERE i.id = ANY (ids) AND i.state = 'open'
        AND NOT EXISTS (SELECT 1 FROM issue_assignees a WHERE a.issue_id = i.id)
        AND EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id
                    WHERE il.issue_id = i.id AND cds_is_beginner_label(l.name));
    $$;

    -- One statement-level trigger per table and event (a trigger with transition tables has one event): the issues
    -- the statement wrote, refreshed once. An issue deleted takes its row with it (the foreign key).
    CREATE FUNCTION cds_contribute_issues_written() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        PERFORM cds_contribute_refresh(ARRAY(SELECT n.id FROM new_rows n));
      ELSE
        PERFORM cds_contribute_refresh(ARRAY(SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
          WHERE (n.state, n.repository_id, n.created_at) IS DISTINCT FROM (o.state, o.repository_id, o.created_at)));
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER cds_contribute_insert AFTER INSERT ON issues REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_issues_written();
    CREATE TRIGGER cds_contribute_update AFTER UPDATE ON issues REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_issues_written();

    -- issue_labels and issue_assignees: the issues of the rows added, removed or changed.
    CREATE FUNCTION cds_contribute_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM cds_contribute_refresh(ARRAY(SELECT DISTINCT n.issue_id FROM new_rows n));
      RETURN NULL;
    END $$;
    CREATE FUNCTION cds_contribute_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM cds_contribute_refresh(ARRAY(SELECT DISTINCT o.issue_id FROM old_rows o));
      RETURN NULL;
    END $$;
    CREATE FUNCTION cds_contribute_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM cds_contribute_refresh(ARRAY(SELECT n.issue_id FROM new_rows n UNION SELECT o.issue_id FROM old_rows o));
      RETURN NULL;
    END $$;
    CREATE TRIGGER cds_contribute_insert AFTER INSERT ON issue_labels REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_added();
    CREATE TRIGGER cds_contribute_delete AFTER DELETE ON issue_labels REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_removed();
    CREATE TRIGGER cds_contribute_update AFTER UPDATE ON issue_labels REFERENCING OLD TABLE AS old_rows
      NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_changed();
    CREATE TRIGGER cds_contribute_insert AFTER INSERT ON issue_assignees REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_added();
    CREATE TRIGGER cds_contribute_delete AFTER DELETE ON issue_assignees REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_removed();
    CREATE TRIGGER cds_contribute_update AFTER UPDATE ON issue_assignees REFERENCING OLD TABLE AS old_rows
      NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_changed();

    -- A label renamed in or out of the beginner labels: the issues that carry it. (A label deleted takes its
    -- issue_labels rows with it, whose trigger above runs.)
    CREATE FUNCTION cds_contribute_labels_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM cds_contribute_refresh(ARRAY(SELECT DISTINCT il.issue_id FROM new_rows n JOIN old_rows o ON o.id = n.id
        JOIN issue_labels il ON il.label_id = n.id
        WHERE cds_is_beginner_label(n.name) IS DISTINCT FROM cds_is_beginner_label(o.name)));
      RETURN NULL;
    END $$;
    CREATE TRIGGER cds_contribute_update AFTER UPDATE ON labels REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION cds_contribute_labels_renamed();

    -- The issues already stored.
    INSERT INTO contribute_candidates (issue_id, repository_id, created_at)
    SELECT i.id, i.repository_id, i.created_at FROM issues i
    WHERE i.state = 'open'
      AND NOT EXISTS (SELECT 1 FROM issue_assignees a WHERE a.issue_id = i.id)
      AND EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id
                  WHERE il.issue_id = i.id AND cds_is_beginner_label(l.name));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER cds_contribute_update ON labels;
    DROP TRIGGER cds_contribute_insert ON issue_assignees;
    DROP TRIGGER cds_contribute_delete ON issue_assignees;
    DROP TRIGGER cds_contribute_update ON issue_assignees;
    DROP TRIGGER cds_contribute_insert ON issue_labels;
    DROP TRIGGER cds_contribute_delete ON issue_labels;
    DROP TRIGGER cds_contribute_update ON issue_labels;
    DROP TRIGGER cds_contribute_insert ON issues;
    DROP TRIGGER cds_contribute_update ON issues;
    DROP FUNCTION cds_contribute_labels_renamed();
    DROP FUNCTION cds_contribute_changed();
    DROP FUNCTION cds_contribute_removed();
    DROP FUNCTION cds_contribute_added();
    DROP FUNCTION cds_contribute_issues_written();
    DROP FUNCTION cds_contribute_refresh(bigint[]);
    DROP TABLE contribute_candidates;
    DROP FUNCTION cds_is_beginner_label(text);
  `.execute(db);
}
