// The issues of a dataset import, staged in the database instead of held in memory (issue 12, item 6).
// Each issue is mapped when read and sent, a batch at a time, to a TEMP table of the import's
// transaction; once every response has been read, SQL picks one version of each issue (the rule of
// github.versions.ts: newest `updated_at`, then most fields, then the first read), ties it to its
// repository, and upserts, links and counts them in a few statements. Memory no longer grows with the
// number of issues. The live sync (one unit at a time) keeps the in-memory path of github.write.ts.
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import { BATCH_ROWS, batches } from './github.queries.ts';
import type { PendingIssue } from './github.collect.ts';
import type { GithubCounts } from './github.write.ts';

const STAGE = sql.table('import_issue_stage');
const REPOSITORY_NAMES = sql.table('import_repository_names');
const LABEL_NAMES = sql.table('import_label_names');
const LABEL_OVERRIDES = sql.table('import_issue_label_overrides');
const CHOSEN = sql.table('import_issues_chosen');
const WRITTEN = sql.table('import_issues_written');
const RELINKED = sql.table('import_issues_relinked');
const RUN_IDS = sql.table('import_run_ids');

/** The columns an issue row gets from its record (references are resolved in SQL). */
const ISSUE_COLUMNS = [
  'github_id', 'number', 'title', 'body', 'state', 'state_reason', 'url', 'comments_count', 'is_locked',
  'closed_at', 'created_at', 'updated_at',
] as const;

export interface LabelOverride {
  repositoryGithubId: number;
  number: number;
  labelGithubIds: number[];
}

export class IssueStage {
  /** Issues read but not yet sent. */
  #rows: Record<string, unknown>[] = [];
  #seq = 0;
  #created = false;
  /** Mapping errors, by index (`error` column): thrown at the end if the issue's repository is known. */
  readonly errors: unknown[] = [];
  /** Whether any issue names a label without an id (the label-name table is only made then). */
  idLessLabels = false;
  /** Distinct issues stored, once chosen. */
  total = 0;

  constructor(readonly db: Db) {}

  add(pending: PendingIssue): void {
    const row: Record<string, unknown> = {
      seq: this.#seq++, repository: pending.repository.toLowerCase(), description: pending.description, fields: pending.fields,
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
    this.#rows.push(row);
  }

  /** Sends the issues read so far once a batch is full (`force`: whatever is left). */
  async flush(force = false): Promise<void> {
    if (!this.#created) await this.#create();
    if (this.#rows.length === 0 || (!force && this.#rows.length < BATCH_ROWS)) return;
    for (const batch of batches(this.#rows)) {
      await sql`INSERT INTO ${STAGE} SELECT * FROM jsonb_populate_recordset(NULL::import_issue_stage, ${JSON.stringify(batch)}::jsonb)`.execute(this.db);
    }
    this.#rows = [];
  }

  async #create(): Promise<void> {
    this.#created = true;
    await sql`CREATE TEMP TABLE import_issue_stage (
      seq integer, repository text, description text, fields integer, error integer,
      github_id bigint, number integer, title text, body text, state text, state_reason text, url text,
      author_github_id bigint, milestone_github_id bigint, comments_count integer, is_locked boolean,
      closed_at timestamptz, created_at timestamptz, updated_at timestamptz,
      label_github_ids bigint[], assignee_github_ids bigint[], id_less_labels text[], id_less_keys text[]
    ) ON COMMIT DROP`.execute(this.db);
  }

  /**
   * Once every response is read: throws the first mapping error of an issue whose repository is known,
   * chooses one version of each issue, and returns what the report needs — the issues skipped (their
   * repository is not in the source) and the id-less label names that matched no label.
   * `repositories`: lower-case `owner/name` → GitHub id; `labels`: `<repository id>/<lower-case name>` → GitHub id.
   */
  async resolve(
    repositories: Map<string, number>,
    labels: Map<string, number>,
    overrides: LabelOverride[],
  ): Promise<{ skippedIssues: number; skippedLabels: number }> {
    await this.flush(true);
    const db = this.db;
    await sql`CREATE TEMP TABLE import_repository_names (name text PRIMARY KEY, github_id bigint NOT NULL) ON COMMIT DROP`.execute(db);
    await insertJson(db, 'import_repository_names', [...repositories].map(([name, github_id]) => ({ name, github_id })));
    // TEMP tables get no statistics from autovacuum: without them the planner guesses their size.
    await sql`ANALYZE import_repository_names`.execute(db);
    await sql`ANALYZE import_issue_stage`.execute(db);

    const { rows: failed } = await sql<{ error: number }>`
      SELECT s.error FROM ${STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
      WHERE s.error IS NOT NULL ORDER BY s.seq LIMIT 1`.execute(db);
    if (failed[0]) throw this.errors[failed[0].error];

    const { rows: [skipped] } = await sql<{ count: string }>`
      SELECT count(DISTINCT s.description) AS count FROM ${STAGE} s
      WHERE NOT EXISTS (SELECT 1 FROM ${REPOSITORY_NAMES} r WHERE r.name = s.repository)`.execute(db);

    // One version per issue, among those of a known repository; `first_seq` keeps the order issues were first read.
    await sql`CREATE TEMP TABLE import_issues_chosen ON COMMIT DROP AS
      SELECT DISTINCT ON (s.github_id) s.*, r.github_id AS repository_github_id,
        min(s.seq) OVER (PARTITION BY s.github_id) AS first_seq
      FROM ${STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
      ORDER BY s.github_id, s.updated_at DESC, s.fields DESC, s.seq`.execute(db);
    await sql`ANALYZE import_issues_chosen`.execute(db);

    let skippedLabels = 0;
    if (this.idLessLabels) {
      await sql`CREATE TEMP TABLE import_label_names (repository_github_id bigint, name text, github_id bigint,
        PRIMARY KEY (repository_github_id, name)) ON COMMIT DROP`.execute(db);
      await insertJson(db, 'import_label_names', [...labels].map(([key, github_id]) => {
        const slash = key.indexOf('/');
        return { repository_github_id: Number(key.slice(0, slash)), name: key.slice(slash + 1), github_id };
      }));
      // Every copy's id-less names count, as when each copy was resolved on its own.
      const { rows: [unmatched] } = await sql<{ count: string }>`
        SELECT count(DISTINCT r.github_id::text || '/' || n.name) AS count
        FROM ${STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
        CROSS JOIN unnest(s.id_less_labels, s.id_less_keys) AS n (name, key)
        WHERE NOT EXISTS (SELECT 1 FROM ${LABEL_NAMES} l WHERE l.repository_github_id = r.github_id AND l.name = n.key)`.execute(db);
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
      await insertJson(db, 'import_issue_label_overrides', overrides.map((o) => ({
        repository_github_id: o.repositoryGithubId, number: o.number, label_github_ids: o.labelGithubIds,
      })));
      await sql`UPDATE ${CHOSEN} c SET label_github_ids = o.label_github_ids FROM ${LABEL_OVERRIDES} o
        WHERE o.repository_github_id = c.repository_github_id AND o.number = c.number`.execute(db);
    }
    const { rows: [chosen] } = await sql<{ count: string }>`SELECT count(*) AS count FROM ${CHOSEN}`.execute(db);
    this.total = Number(chosen!.count);
    return { skippedIssues: Number(skipped!.count), skippedLabels };
  }

  /**
   * Upserts the chosen issues (only where a value differs, as upsertByGithubId does), with their
   * repository, author (any stored member) and milestone (one stored by this run: `milestones`).
   */
  async write(counts: GithubCounts, milestones: Map<number, string>): Promise<void> {
    const db = this.db;
    await runIds(db, 'milestones', milestones);
    const columns = [...ISSUE_COLUMNS, 'repository_id', 'author_id', 'milestone_id'];
    const values = columns.filter((column) => column !== 'github_id');
    const refs = (prefix: string, names: readonly string[]) => sql.join(names.map((name) => sql.ref(`${prefix}.${name}`)));
    await sql`CREATE TEMP TABLE import_issues_written (id bigint, inserted boolean) ON COMMIT DROP`.execute(db);
    await sql`
      WITH written AS (
        INSERT INTO issues AS t (${sql.join(columns.map((column) => sql.ref(column)))})
        SELECT ${refs('c', ISSUE_COLUMNS)}, repository.id, author.id, milestone.id
        FROM ${CHOSEN} c
        JOIN repositories repository ON repository.github_id = c.repository_github_id
        LEFT JOIN members author ON author.github_id = c.author_github_id
        LEFT JOIN ${RUN_IDS} milestone ON milestone.kind = 'milestones' AND milestone.github_id = c.milestone_github_id
        ORDER BY c.first_seq
        ON CONFLICT (github_id) DO UPDATE
        SET ${sql.join(values.map((column) => sql`${sql.ref(column)} = ${sql.ref(`excluded.${column}`)}`))},
          nest_updated_at = now()
        WHERE (${refs('t', values)}) IS DISTINCT FROM (${refs('excluded', values)})
        RETURNING t.id, (xmax = 0) AS inserted
      )
      INSERT INTO ${WRITTEN} SELECT id, inserted FROM written`.execute(db);
    const { rows: [written] } = await sql<{ inserted: string; updated: string }>`
      SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated
      FROM ${WRITTEN}`.execute(db);
    await sql`ANALYZE import_issues_written`.execute(db);
    counts.inserted += Number(written!.inserted);
    counts.updated += Number(written!.updated);
  }

  /**
   * Makes the labels (those stored by this run: `labels`) and assignees (any stored member) of every
   * stored issue what its chosen version lists; an issue whose links alone changed is touched and
   * counted as updated, once.
   */
  async link(counts: GithubCounts, labels: Map<number, string>): Promise<void> {
    const db = this.db;
    await runIds(db, 'labels', labels);
    await sql`CREATE TEMP TABLE import_issues_relinked (owner bigint) ON COMMIT DROP`.execute(db);
    const links = [
      { table: sql.table('issue_labels'), other: sql.ref('label_id'), ids: sql.ref('c.label_github_ids'),
        target: sql`SELECT id, github_id FROM ${RUN_IDS} WHERE kind = 'labels'` },
      { table: sql.table('issue_assignees'), other: sql.ref('member_id'), ids: sql.ref('c.assignee_github_ids'),
        target: sql`SELECT id, github_id FROM members` },
    ];
    for (const { table, other, ids, target } of links) {
      await sql`
        WITH owners AS (
          SELECT i.id, ${ids} AS ids FROM ${CHOSEN} c JOIN issues i ON i.github_id = c.github_id
        ),
        wanted AS (
          SELECT o.id AS owner, target.id AS other
          FROM owners o CROSS JOIN unnest(o.ids) AS g (github_id) JOIN (${target}) target ON target.github_id = g.github_id
        ),
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
    // (No DISTINCT above: a repeated pair is inserted once, ON CONFLICT DO NOTHING; EXCEPT removes repeated owners.)
    const { rows: [touched] } = await sql<{ count: string }>`
      WITH touched AS (
        UPDATE issues SET nest_updated_at = now()
        WHERE id IN (SELECT owner FROM ${RELINKED} EXCEPT SELECT id FROM ${WRITTEN})
        RETURNING 1
      )
      SELECT count(*) AS count FROM touched`.execute(db);
    counts.updated += Number(touched!.count);
  }
}

/** Row ids stored by this run (milestones, labels): references resolve only to those, as in github.write.ts. */
async function runIds(db: Db, kind: string, ids: Map<number, string>): Promise<void> {
  await sql`CREATE TEMP TABLE IF NOT EXISTS import_run_ids (kind text, github_id bigint, id bigint,
    PRIMARY KEY (kind, github_id)) ON COMMIT DROP`.execute(db);
  await insertJson(db, 'import_run_ids', [...ids].map(([github_id, id]) => ({ kind, github_id, id })));
  await sql`ANALYZE import_run_ids`.execute(db);
}

async function insertJson(db: Db, table: string, rows: Record<string, unknown>[]): Promise<void> {
  for (const batch of batches(rows, BATCH_ROWS * 4)) {
    await sql`INSERT INTO ${sql.table(table)} SELECT * FROM jsonb_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(batch)}::jsonb)`.execute(db);
  }
}
