// An issue's labels and assignees from its dump line's `extra` (api/v0/issues/issues.schemas.ts, IssueStored), written
// after the batch's issues: the issues list's `label` and `is_assigned`, /contribute/ and the health's unassigned
// issues read the link tables. A label is named as stored, in the issue's repository (labels are a repository's on
// GitHub, and the labels dump is read before); an assignee by login. An assignee the members dump does not hold (a
// member the source has not published: no GitHub profile yet) is added as such a member, login only and no dates, as
// a GitHub sync adds one (unpublished: no list nor detail shows it), its GitHub id negative as the others'.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';

/** The batch's lines (linesParameter) with their issue's row: `e.v` the line, `i` the issue, `rep` its repository. */
const LINE_ISSUES = (lines: string) => sql`jsonb_array_elements(${lines}::jsonb) WITH ORDINALITY AS e(v, n)
    CROSS JOIN LATERAL jsonb_to_record(e.v->'params') AS p(organization_id text, repository_id text, issue_id int)
    JOIN repositories rep
      ON lower(rep.owner_login) = lower(p.organization_id) AND lower(rep.name) = lower(p.repository_id)
    JOIN issues i ON i.repository_id = rep.id AND i.number = p.issue_id`;

/**
 * The names in a line's `extra` field: its elements as text; anything but an array one null, which no row matches, so
 * that the import refuses a line whose field is missing or not a list rather than reading it as none.
 */
const NAMES = (field: 'labels' | 'assignees') =>
  sql`jsonb_array_elements_text(CASE WHEN jsonb_typeof(e.v->'extra'->${sql.lit(field)}) = 'array'
    THEN e.v->'extra'->${sql.lit(field)} ELSE '[null]'::jsonb END)`;

/** The links a batch names and those written: fewer written when a name is not there (the import refuses it). */
export interface LinksWritten {
  labels: { named: number; written: number };
  assignees: { named: number; written: number };
}

/** Writes the labels and assignees of a batch of issue lines, whose issues are written already. */
export async function insertIssueLinks(db: Db, lines: string): Promise<LinksWritten> {
  await sql`
    INSERT INTO members (github_id, login)
    SELECT (SELECT least(coalesce(min(github_id), 0), 0) FROM members) - row_number() OVER (ORDER BY s.n, s.k), s.login
    FROM (
      SELECT DISTINCT ON (lower(a.login)) a.login, e.n, a.k
      FROM ${LINE_ISSUES(lines)}
      CROSS JOIN LATERAL ${NAMES('assignees')} WITH ORDINALITY AS a(login, k)
      WHERE a.login <> '' AND NOT EXISTS (SELECT 1 FROM members m WHERE lower(m.login) = lower(a.login))
      ORDER BY lower(a.login), e.n, a.k
    ) AS s`.execute(db);
  const labels = await sql<{ named: number; written: number }>`
    WITH wanted AS (
      SELECT DISTINCT i.id AS issue_id, x.name, l.id AS label_id
      FROM ${LINE_ISSUES(lines)}
      CROSS JOIN LATERAL ${NAMES('labels')} AS x(name)
      LEFT JOIN labels l ON l.repository_id = rep.id AND l.name = x.name
    ), written AS (
      INSERT INTO issue_labels (issue_id, label_id)
      SELECT issue_id, label_id FROM wanted WHERE label_id IS NOT NULL
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM wanted)::int AS named, (SELECT count(*) FROM written)::int AS written`.execute(db);
  const assignees = await sql<{ named: number; written: number }>`
    WITH wanted AS (
      SELECT DISTINCT i.id AS issue_id, lower(a.login) AS login, m.id AS member_id
      FROM ${LINE_ISSUES(lines)}
      CROSS JOIN LATERAL ${NAMES('assignees')} AS a(login)
      LEFT JOIN members m ON lower(m.login) = lower(a.login)
    ), written AS (
      INSERT INTO issue_assignees (issue_id, member_id)
      SELECT issue_id, member_id FROM wanted WHERE member_id IS NOT NULL
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM wanted)::int AS named, (SELECT count(*) FROM written)::int AS written`.execute(db);
  return { labels: labels.rows[0]!, assignees: assignees.rows[0]! };
}
