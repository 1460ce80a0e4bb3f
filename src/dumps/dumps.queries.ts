// The records of each dump (as its resource declares it: dump-source.ts), rendered as JSON by the database, batch by
// batch in the order of the table's id. One statement renders a whole batch as NDJSON text, as the lists' pages are
// rendered (api/v0/common/pagination.ts): Node only compresses and writes it (docs/decisions.md, dumps). Also the
// build's snapshot and lock (the id of the database the dumps were built from is db/meta.queries.ts's).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/index.ts';
import { itemColumns, storedColumns, tablesOf } from '../db/statements.ts';
import type { DumpSource } from './dump-source.ts';

/** One batch of a dump: its lines as NDJSON text (each ending in a newline), how many, and where the next starts. */
export interface Batch {
  text: string;
  records: number;
  /** A batch read by `limit`: the last key of its range (the next batch's `after`); undefined when none is left. */
  upTo: string | undefined;
}

/**
 * Which records a batch holds: keys after `after` (if given), up to `upTo` included, or up to the `limit`-th key of
 * the key's table after `after` (fewer records when the dump's rows leave some keys out).
 */
export interface BatchRange {
  after?: string | undefined;
  upTo?: string | undefined;
  limit?: number;
}

type Condition = (column: string) => RawBuilder<boolean>;

/**
 * The dump's rows with the key (`__k`) and each extra field (`__x_<name>`): a column of the key's table, computed, or
 * grouped by key over the keys `inRange` keeps (every key when not given: the statement tablesRead reads).
 */
async function rowsOf(db: Db, source: DumpSource, inRange: Condition = () => sql<boolean>`true`) {
  const table = source.key.split('.')[0]!;
  const extra = source.extra ? Object.keys(source.extra.properties) : [];
  const grouped = source.extraGrouped ?? {};
  let rows = await source.rows(db);
  for (const [name, field] of Object.entries(grouped))
    rows = rows.leftJoin(sql`(${field.rows(inRange)})`.as(`__g_${name}`), `__g_${name}.k`, source.key);
  return rows.select([
    sql.ref(source.key).as('__k'),
    ...extra.map((name) => {
      const field = grouped[name];
      if (field) return sql`coalesce(${sql.ref(`__g_${name}.v`)}, ${field.otherwise})`.as(`__x_${name}`);
      return (source.extraComputed?.[name] ?? sql.ref(`${table}.${name}`)).as(`__x_${name}`);
    }),
  ]);
}

/** The bounds of a batch's keys: above `after`; at most `upTo`, or the `limit`-th key after `after` (its table's). */
function boundsOf(source: DumpSource, range: BatchRange) {
  const [table, column] = source.key.split('.') as [string, string];
  const lower = range.after !== undefined ? sql`${range.after}` : undefined;
  let upper: RawBuilder<unknown> | undefined;
  if (range.upTo !== undefined) upper = sql`${range.upTo}`;
  else if (range.limit !== undefined)
    upper = sql`(SELECT max(w.k) FROM (SELECT ${sql.ref(column)} AS k FROM ${sql.table(table)}
      ${lower ? sql`WHERE ${sql.ref(column)} > ${lower}` : sql``} ORDER BY ${sql.ref(column)} LIMIT ${range.limit}) AS w)`;
  const inRange: Condition = (column) =>
    sql<boolean>`${sql.join(
      [
        ...(lower ? [sql`${sql.ref(column)} > ${lower}`] : []),
        ...(upper ? [sql`${sql.ref(column)} <= ${upper}`] : []),
        ...(!lower && !upper ? [sql`true`] : []),
      ],
      sql` AND `,
    )}`;
  return { upper, inRange };
}

/** The statement of one batch: its records in the order of the key, rendered as NDJSON by the database. */
export async function batchQuery(db: Db, source: DumpSource, range: BatchRange) {
  const { upper, inRange } = boundsOf(source, range);
  // The batch's range, on the key and on each grouped field's key (their aggregates cover this batch only).
  const rows = (await rowsOf(db, source, inRange)).where(inRange(source.key)).orderBy(sql.ref(source.key));
  const params =
    source.params.length > 0
      ? sql.join(source.params.map((name) => sql`${sql.ref(`t.__p_${name}`)} AS ${sql.id(name)}`))
      : undefined;
  const paramsJson = params ? sql`row_to_json(p)::text` : sql`'{}'`;
  const extraJson = source.extra ? sql`|| ',"extra":' || row_to_json(x)::text` : sql``;
  // The grouped fields are JSON already.
  const extraColumns = source.extra
    ? storedColumns(source.extra, '__x_', new Set(Object.keys(source.extraGrouped ?? {})))
    : [];
  // Read by `limit`: the range's end, where the next batch starts (none past the last key).
  const upTo = range.upTo === undefined && upper ? sql`(${upper})::text` : sql`NULL::text`;
  // Written as text around the two JSON objects: json_build_object would put blanks around its colons and commas.
  // string_agg takes the rows in the order of the ordered subquery, as the lists' pages do (pagination.ts): an
  // ORDER BY inside it sorted each batch again, spilling 4 MB of text to disk every 10,000 issues (3× slower).
  return sql<{ text: string | null; records: number; up_to: string | null }>`
    ${source.with ? sql`WITH ${source.with}` : sql``}
    SELECT string_agg('{"params":' || ${paramsJson} || ',"record":' || row_to_json(j)::text ${extraJson} || E'}\n', '')
        AS text,
      count(*)::int AS records, ${upTo} AS up_to
    FROM (${rows}) AS t
    ${params ? sql`CROSS JOIN LATERAL (SELECT ${params}) AS p` : sql``}
    CROSS JOIN LATERAL (SELECT ${sql.join(itemColumns(source.record))}) AS j
    ${source.extra ? sql`CROSS JOIN LATERAL (SELECT ${sql.join(extraColumns)}) AS x` : sql``}`;
}

export async function readBatch(db: Db, source: DumpSource, range: BatchRange): Promise<Batch> {
  const { rows } = await (await batchQuery(db, source, range)).execute(db);
  const row = rows[0];
  return { text: row?.text ?? '', records: Number(row?.records ?? 0), upTo: row?.up_to ?? undefined };
}

/**
 * The keys that cut the dump's table into batches of `step` rows (every step-th key, in order): one pass over its
 * primary key, so that batches can be read at once on several connections. Memory: one key per batch.
 */
export async function batchBoundaries(db: Db, source: DumpSource, step: number): Promise<string[]> {
  const [table, column] = source.key.split('.') as [string, string];
  const { rows } = await sql<{ k: string }>`
    SELECT k::text AS k FROM (
      SELECT ${sql.ref(column)} AS k, row_number() OVER (ORDER BY ${sql.ref(column)}) AS n FROM ${sql.table(table)}
    ) AS s WHERE n % ${step} = 0 ORDER BY n`.execute(db);
  return rows.map((row) => row.k);
}

/** The tables a dump reads (its batch statement's): when none of their versions moved, its file still holds. */
export async function tablesRead(db: Db, source: DumpSource): Promise<string[]> {
  const withText = source.with ? sql`${source.with}`.compile(db).sql : '';
  // Less the names the WITH defines, and LATERAL after a JOIN: they are no tables.
  const defined = new Set([
    'lateral',
    ...[...withText.matchAll(/(\w+) AS (?:NOT )?MATERIALIZED/gi)].map((m) => m[1]!.toLowerCase()),
  ]);
  const tables = tablesOf(`${withText} ${(await rowsOf(db, source)).compile().sql}`);
  return tables.filter((table) => !defined.has(table)).sort();
}

/** Waits for (`wait`) or tries to take the lock of dump builds, held until the transaction ends: one build at a time. */
export async function lockDumpBuilds(trx: Db, wait: boolean): Promise<boolean> {
  if (wait) {
    await sql`SELECT pg_advisory_xact_lock(${DUMPS_LOCK})`.execute(trx);
    return true;
  }
  const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${DUMPS_LOCK}) AS locked`.execute(
    trx,
  );
  return rows[0]?.locked === true;
}

const DUMPS_LOCK = 727_028;

/** The id of the transaction's snapshot, for other connections to read the same data (joinSnapshot). */
export async function exportSnapshot(trx: Db): Promise<string> {
  const { rows } = await sql<{ id: string }>`SELECT pg_export_snapshot() AS id`.execute(trx);
  return rows[0]!.id;
}

/** The transaction reads the snapshot another one exported (repeatable read; before its first query), and writes nothing. */
export async function joinSnapshot(trx: Db, snapshot: string): Promise<void> {
  await sql`SET TRANSACTION SNAPSHOT ${sql.lit(snapshot)}`.execute(trx);
  await readOnlySnapshot(trx);
}

/** The rest of a build's transaction reads one snapshot of the data, and writes nothing. */
export async function readOnlySnapshot(trx: Db): Promise<void> {
  await sql`SET TRANSACTION READ ONLY`.execute(trx);
  // Each batch is short, but a machine under load should not cancel a build half-way.
  await sql`SET LOCAL statement_timeout = 0`.execute(trx);
}
