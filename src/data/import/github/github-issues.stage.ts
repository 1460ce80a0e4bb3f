// The dataset import's issues: staged as read, then one version of each chosen, written and linked in SQL.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { PendingIssue } from '../../github/github.pending.ts';
import { BATCH_ROWS } from '../../github/github.queries.ts';
import { ISSUE_COLUMNS } from '../../github/github.columns.ts';
import type { GithubCounts } from '../../github/github.records.ts';
import type { LabelOverride } from '../../github/github.resolve.ts';
import {
  CHOSEN,
  LABEL_NAMES,
  LABEL_OVERRIDES,
  RELINKED,
  REPOSITORY_NAMES,
  RUN_IDS,
  STAGE,
  WHOLE_PARTITION,
  WRITTEN,
  checkStaged,
  countWritten,
  createRunIds,
  insertInto,
  insertJson,
  refs,
  updateWhereDifferent,
} from './github-stage.queries.ts';
import { takeRows } from './github-stage.rows.ts';
export class IssueStage {
  #seq = 0;
  #created = false;
  /** Mapping errors, by index (`error` column): thrown at the end if the issue's repository is known. */
  readonly errors: unknown[] = [];
  /** Whether any issue names a label without an id (the label-name table is only made then). */
  idLessLabels = false;
  /** Distinct issues stored, once chosen. */
  total = 0;

  /**
   * @param fresh the tables that were empty when the write began (a first load): rows only go in, so their
   *   upserts are plain inserts (nothing to conflict with: one version per id was chosen).
   */
  constructor(
    readonly db: Db,
    readonly fresh: ReadonlySet<string> = new Set(),
  ) {}

  add(pending: PendingIssue): void {
    const row: Record<string, unknown> = {
      seq: this.#seq++,
      repository: pending.repository.toLowerCase(),
      description: pending.description,
      fields: pending.fields,
    };
    if (pending.error !== undefined) {
      row.error = this.errors.push(pending.error) - 1;
    } else {
      const { repository_github_id: _repository, ...record } = pending.record!;
      Object.assign(row, record);
      const names = pending.idLessLabels ?? [];
      if (names.length > 0) {
        this.idLessLabels = true;
        row.id_less_labels = names;
        row.id_less_keys = names.map((name) => name.toLowerCase());
      }
    }
    this.rows.push(row);
  }

  /** Sends the issues read so far once a batch is full (`force`: whatever is left). */
  async flush(force = false): Promise<void> {
    await this.create();
    const rows = this.take(force);
    if (rows) await insertJson(this.db, 'import_issue_stage', rows, BATCH_ROWS);
  }

  /** The rows to send now, if a batch is full (`force`: whatever is left), taken from those held. */
  take(force: boolean): Record<string, unknown>[] | null {
    return takeRows(this, force);
  }

  rows: Record<string, unknown>[] = [];

  async create(): Promise<void> {
    if (this.#created) return;
    this.#created = true;
    // The issue's columns (ISSUE_COLUMNS, the columns an issue row gets from its record; references are resolved in
    // SQL) with their types in the issues table, beside the copy's place and what it refers to by GitHub id.
    await sql`CREATE TEMP TABLE import_issue_stage ON COMMIT DROP AS
      SELECT NULL::integer AS seq, NULL::text AS repository, NULL::text AS description, NULL::integer AS fields,
        NULL::integer AS error, ${refs('i', ISSUE_COLUMNS)}, NULL::bigint AS author_github_id,
        NULL::bigint AS milestone_github_id, NULL::bigint[] AS label_github_ids, NULL::bigint[] AS assignee_github_ids,
        NULL::text[] AS id_less_labels, NULL::text[] AS id_less_keys
      FROM issues i WITH NO DATA`.execute(this.db);
  }

  /**
   * Once every response is read: throws the first mapping error of an issue whose repository is known,
   * chooses one version of each issue, and returns what the report needs — the issues skipped (their
   * repository is not in the source) and the id-less label names that matched no label. The repositories
   * (`import_repository_names`) are chosen already; `labelNames` makes `import_label_names` if needed.
   */
  async resolve(
    overrides: LabelOverride[],
    labelNames: () => Promise<void>,
  ): Promise<{ skippedIssues: number; skippedLabels: number }> {
    await this.flush(true);
    const db = this.db;
    // TEMP tables get no statistics from autovacuum: without them the planner guesses their size.
    await sql`ANALYZE import_issue_stage`.execute(db);

    const skipped = await checkStaged(db, STAGE, this.errors);

    // One version per issue, among those of a known repository; `first_seq` keeps the order issues were first read.
    // (The window is ordered as DISTINCT ON is, over the whole partition: one sort serves both.)
    await sql`CREATE TEMP TABLE import_issues_chosen ON COMMIT DROP AS
      SELECT DISTINCT ON (s.github_id) s.*, r.github_id AS repository_github_id, min(s.seq) OVER (
          PARTITION BY s.github_id ORDER BY s.updated_at DESC, s.fields DESC, s.seq ${WHOLE_PARTITION}) AS first_seq
      FROM ${STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
      ORDER BY s.github_id, s.updated_at DESC, s.fields DESC, s.seq`.execute(db);
    await sql`ANALYZE import_issues_chosen`.execute(db);

    let skippedLabels = 0;
    if (this.idLessLabels) {
      await labelNames();
      // Every copy's id-less names count, as when each copy was resolved on its own.
      const {
        rows: [unmatched],
      } = await sql<{ count: string }>`
        SELECT count(DISTINCT r.github_id::text || '/' || n.name) AS count
        FROM ${STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
        CROSS JOIN unnest(s.id_less_labels, s.id_less_keys) AS n (name, key)
        WHERE NOT EXISTS (SELECT 1 FROM ${LABEL_NAMES} l WHERE l.repository_github_id = r.github_id AND l.name = n.key)`.execute(
        db,
      );
      skippedLabels = Number(unmatched!.count);
      await sql`UPDATE ${CHOSEN} c SET label_github_ids = c.label_github_ids || ARRAY(
          SELECT l.github_id FROM unnest(c.id_less_keys) WITH ORDINALITY AS n (key, i)
          JOIN ${LABEL_NAMES} l ON l.repository_github_id = c.repository_github_id AND l.name = n.key ORDER BY n.i)
        WHERE c.id_less_keys IS NOT NULL`.execute(db);
    }
    // The labels a response lists for one issue replace those of its copies.
    if (overrides.length > 0) {
      await sql`CREATE TEMP TABLE import_issue_label_overrides (repository_github_id bigint, number integer,
        label_github_ids bigint[], PRIMARY KEY (repository_github_id, number)) ON COMMIT DROP`.execute(db);
      await insertJson(
        db,
        'import_issue_label_overrides',
        overrides.map((o) => ({
          repository_github_id: o.repositoryGithubId,
          number: o.number,
          label_github_ids: o.labelGithubIds,
        })),
      );
      await sql`UPDATE ${CHOSEN} c SET label_github_ids = o.label_github_ids FROM ${LABEL_OVERRIDES} o
        WHERE o.repository_github_id = c.repository_github_id AND o.number = c.number`.execute(db);
    }
    const {
      rows: [chosen],
    } = await sql<{ count: string }>`SELECT count(*) AS count FROM ${CHOSEN}`.execute(db);
    this.total = Number(chosen!.count);
    return { skippedIssues: skipped, skippedLabels };
  }

  /**
   * Upserts the chosen issues (only where a value differs, as upsertByGithubId does), with their
   * repository, author (any stored member) and milestone (one stored by this run: in `import_run_ids`).
   */
  async write(counts: GithubCounts): Promise<void> {
    const db = this.db;
    await createRunIds(db);
    await sql`ANALYZE import_run_ids`.execute(db);
    const columns = [...ISSUE_COLUMNS, 'repository_id', 'author_id', 'milestone_id'];
    await sql`CREATE TEMP TABLE import_issues_written (id bigint, inserted boolean) ON COMMIT DROP`.execute(db);
    await sql`
      WITH written AS (
        ${insertInto('issues', columns)}
        SELECT ${refs('c', ISSUE_COLUMNS)}, repository.id, author.id, milestone.id
        FROM ${CHOSEN} c
        JOIN repositories repository ON repository.github_id = c.repository_github_id
        LEFT JOIN members author ON author.github_id = c.author_github_id
        LEFT JOIN ${RUN_IDS} milestone ON milestone.kind = 'milestones' AND milestone.github_id = c.milestone_github_id
        ORDER BY c.first_seq
        ${updateWhereDifferent(columns, this.fresh.has('issues'))}
      )
      INSERT INTO ${WRITTEN} SELECT id, inserted FROM written`.execute(db);
    await countWritten(db, WRITTEN, counts);
    await sql`ANALYZE import_issues_written`.execute(db);
  }

  /**
   * Makes the labels (those stored by this run, in `import_run_ids`) and assignees (any stored member) of
   * every stored issue what its chosen version lists; an issue whose links alone changed is touched and
   * counted as updated, once. On a first load (`fresh` has the issues: their table was empty before this run) every
   * issue was inserted now and has no links yet — the pairs are only added (nothing to delete, nothing to touch).
   */
  async link(counts: GithubCounts): Promise<void> {
    const db = this.db;
    const firstLoad = this.fresh.has('issues');
    await sql`ANALYZE import_run_ids`.execute(db);
    await sql`CREATE TEMP TABLE import_issues_relinked (owner bigint) ON COMMIT DROP`.execute(db);
    const links = [
      {
        table: sql.table('issue_labels'),
        other: sql.ref('label_id'),
        ids: sql.ref('c.label_github_ids'),
        target: sql`SELECT id, github_id FROM ${RUN_IDS} WHERE kind = 'labels'`,
      },
      {
        table: sql.table('issue_assignees'),
        other: sql.ref('member_id'),
        ids: sql.ref('c.assignee_github_ids'),
        target: sql`SELECT id, github_id FROM members`,
      },
    ];
    for (const { table, other, ids, target } of links) {
      const owners = sql`SELECT i.id, ${ids} AS ids FROM ${CHOSEN} c JOIN issues i ON i.github_id = c.github_id`;
      const wanted = sql`SELECT o.id AS owner, target.id AS other
        FROM owners o CROSS JOIN unnest(o.ids) AS g (github_id) JOIN (${target}) target ON target.github_id = g.github_id`;
      if (firstLoad) {
        await sql`WITH owners AS (${owners}), wanted AS (${wanted})
          INSERT INTO ${table} (issue_id, ${other}) SELECT DISTINCT owner, other FROM wanted`.execute(db);
        continue;
      }
      await sql`
        WITH owners AS (${owners}),
        wanted AS (${wanted}),
        removed AS (
          DELETE FROM ${table} AS p USING owners o WHERE p.issue_id = o.id
            AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.owner = p.issue_id AND w.other = p.${other})
          RETURNING p.issue_id AS owner
        ),
        added AS (
          INSERT INTO ${table} (issue_id, ${other}) SELECT owner, other FROM wanted
          ON CONFLICT DO NOTHING RETURNING issue_id AS owner
        )
        INSERT INTO ${RELINKED} SELECT owner FROM removed UNION ALL SELECT owner FROM added`.execute(db);
    }
    if (firstLoad) return;
    // (No DISTINCT above: a repeated pair is inserted once, ON CONFLICT DO NOTHING; EXCEPT removes repeated owners.)
    const {
      rows: [touched],
    } = await sql<{ count: string }>`
      WITH touched AS (
        UPDATE issues SET nest_updated_at = now()
        WHERE id IN (SELECT owner FROM ${RELINKED} EXCEPT SELECT id FROM ${WRITTEN})
        RETURNING 1
      )
      SELECT count(*) AS count FROM touched`.execute(db);
    counts.updated += Number(touched!.count);
  }
}
