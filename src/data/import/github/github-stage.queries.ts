// The SQL the dataset import's stages share (github-dataset.stage.ts): the names of their TEMP tables, sending rows to
// them, choosing and upserting what they hold, and counting what was written.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { BATCH_ROWS, batches } from '../../github/github.queries.ts';
import type { GithubCounts } from '../../github/github.records.ts';

export const STAGE = sql.table('import_issue_stage');
export const REPOSITORY_NAMES = sql.table('import_repository_names');
export const LABEL_NAMES = sql.table('import_label_names');
export const LABEL_OVERRIDES = sql.table('import_issue_label_overrides');
export const CHOSEN = sql.table('import_issues_chosen');
export const WRITTEN = sql.table('import_issues_written');
export const RELINKED = sql.table('import_issues_relinked');
export const RUN_IDS = sql.table('import_run_ids');
export const LABEL_STAGE = sql.table('import_label_stage');
export const LABELS_CHOSEN = sql.table('import_labels_chosen');

/**
 * The frame of a window that is ordered only so that its sort is also the one of the DISTINCT ON around it: the
 * aggregate still sees every row of the partition.
 */
export const WHOLE_PARTITION = sql.raw('ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING');

/** Row ids stored by this run (milestones, labels): references resolve only to those, as in github.write.ts. */
export async function createRunIds(db: Db): Promise<void> {
  await sql`CREATE TEMP TABLE IF NOT EXISTS import_run_ids (kind text, github_id bigint, id bigint,
    PRIMARY KEY (kind, github_id)) ON COMMIT DROP`.execute(db);
}

export async function insertJson(
  db: Db,
  table: string,
  rows: Record<string, unknown>[],
  size = BATCH_ROWS * 4,
): Promise<void> {
  for (const batch of batches(rows, size)) {
    await sql`INSERT INTO ${sql.table(table)} SELECT * FROM jsonb_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(batch)}::jsonb)`.execute(
      db,
    );
  }
}

export interface Reference {
  column: string;
  value: RawBuilder<unknown>;
  join: RawBuilder<unknown>;
}

/**
 * Upserts the chosen records of a TEMP table (`github_id`, `record` jsonb, `first_seq`) into `table`, in
 * the order first met, only where a value differs (as upsertByGithubId does, and with the same jsonb to
 * column conversion); `columns`: the record's keys that are columns, `references`: columns joined in;
 * `changed`: return the ids of the rows written; `fresh`: the table was empty (updateWhereDifferent).
 */
export async function upsertChosen(
  db: Db,
  table: string,
  chosen: string,
  recordColumns: string[] | undefined,
  references: Reference[],
  counts: GithubCounts,
  { changed = false, fresh = false }: { changed?: boolean; fresh?: boolean } = {},
): Promise<Set<string>> {
  if (recordColumns === undefined) return new Set();
  const columns = [...recordColumns, ...references.map((reference) => reference.column)];
  const written = sql.table(`import_${table}_written`);
  await sql`CREATE TEMP TABLE ${written} (id bigint, inserted boolean) ON COMMIT DROP`.execute(db);
  await sql`
    WITH written AS (
      ${insertInto(table, columns)}
      SELECT ${refs('r', recordColumns)}${sql.join(
        references.map((reference) => sql`, ${reference.value}`),
        sql``,
      )}
      FROM ${sql.table(chosen)} c
      CROSS JOIN LATERAL jsonb_populate_record(NULL::${sql.table(table)}, c.record) r
      ${sql.join(
        references.map((reference) => reference.join),
        sql` `,
      )}
      ORDER BY c.first_seq
      ${updateWhereDifferent(columns, fresh)}
    )
    INSERT INTO ${written} SELECT id, inserted FROM written`.execute(db);
  await countWritten(db, written, counts);
  if (!changed) return new Set();
  const { rows } = await sql<{ id: string }>`SELECT id FROM ${written}`.execute(db);
  return new Set(rows.map((row) => row.id));
}

export const refs = (prefix: string, names: readonly string[]) =>
  sql.join(names.map((name) => sql.ref(`${prefix}.${name}`)));

/** `INSERT INTO table AS t (columns)`, the head of the upserts by github_id below. */
export const insertInto = (table: string, columns: readonly string[]) =>
  sql`INSERT INTO ${sql.table(table)} AS t (${sql.join(columns.map((column) => sql.ref(column)))})`;

/**
 * The tail of an upsert by github_id: a stored row is updated only where one of its values differs, and
 * every row written is returned with whether it was new (read by countWritten). `fresh`: the table was
 * empty and the rows have distinct ids, so none can conflict; a plain insert skips the speculative one.
 */
export function updateWhereDifferent(columns: readonly string[], fresh = false): RawBuilder<unknown> {
  if (fresh) return sql`RETURNING t.id, (xmax = 0) AS inserted`;
  const values = columns.filter((column) => column !== 'github_id');
  return sql`ON CONFLICT (github_id) DO UPDATE
    SET ${sql.join(values.map((column) => sql`${sql.ref(column)} = ${sql.ref(`excluded.${column}`)}`))},
      nest_updated_at = now()
    WHERE (${refs('t', values)}) IS DISTINCT FROM (${refs('excluded', values)})
    RETURNING t.id, (xmax = 0) AS inserted`;
}

/** Adds the rows of a `written` table (id, inserted) to the counts: inserted or updated. */
export async function countWritten(db: Db, written: RawBuilder<unknown>, counts: GithubCounts): Promise<void> {
  const {
    rows: [result],
  } = await sql<{ inserted: string; updated: string }>`
    SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated
    FROM ${written}`.execute(db);
  counts.inserted += Number(result!.inserted);
  counts.updated += Number(result!.updated);
}

/**
 * Throws the first mapping error (in reading order) of a staged record whose repository is known, and
 * returns how many distinct records were skipped for belonging to a repository absent from the source.
 */
export async function checkStaged(db: Db, stage: RawBuilder<unknown>, errors: unknown[]): Promise<number> {
  const { rows: failed } = await sql<{ error: number }>`
    SELECT s.error FROM ${stage} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
    WHERE s.error IS NOT NULL ORDER BY s.seq LIMIT 1`.execute(db);
  if (failed[0]) throw errors[failed[0].error];
  const {
    rows: [skipped],
  } = await sql<{ count: string }>`
    SELECT count(DISTINCT s.description) AS count FROM ${stage} s
    WHERE NOT EXISTS (SELECT 1 FROM ${REPOSITORY_NAMES} r WHERE r.name = s.repository)`.execute(db);
  return Number(skipped!.count);
}

export async function count(db: Db, table: string): Promise<number> {
  const {
    rows: [row],
  } = await sql<{ count: string }>`SELECT count(*) AS count FROM ${sql.table(table)}`.execute(db);
  return Number(row!.count);
}

export async function keyed(
  db: Db,
  query: RawBuilder<{ key: string; github_id: string }>,
): Promise<Map<string, number>> {
  const { rows } = await query.execute(db);
  return new Map(rows.map((row) => [row.key, Number(row.github_id)]));
}
