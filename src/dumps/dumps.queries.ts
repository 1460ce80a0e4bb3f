// The records of each dump (as its resource declares it: dump-source.ts), rendered as JSON by the database, batch by
// batch in the order of the table's id. One statement renders a whole batch as NDJSON text, as the lists' pages are
// rendered (api/v0/common/pagination.ts): Node only compresses and writes it (docs/decisions.md, dumps). Also the
// build's snapshot and lock (the id of the database the dumps were built from is db/meta.queries.ts's).
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { itemColumns, storedColumns, tablesOf } from '../db/statements.ts';
import type { DumpSource } from './dump-source.ts';

/** One batch of a dump: its lines as NDJSON text (each ending in a newline), how many, and the key of the last. */
export interface Batch {
  text: string;
  records: number;
  last: string | undefined;
}

/** Which records a batch holds: keys after `after` (if given), up to `upTo` included or the first `limit` of them. */
export interface BatchRange {
  after?: string | undefined;
  upTo?: string | undefined;
  limit?: number;
}

/** The dump's rows with the key (`__k`) and each extra field (`__x_<name>`): a column of the key's table, or computed. */
async function rowsOf(db: Db, source: DumpSource) {
  const table = source.key.split('.')[0]!;
  const extra = source.extra ? Object.keys(source.extra.properties) : [];
  return (await source.rows(db)).select([
    sql.ref(source.key).as('__k'),
    ...extra.map((name) => (source.extraComputed?.[name] ?? sql.ref(`${table}.${name}`)).as(`__x_${name}`)),
  ]);
}

/** The statement of one batch: its records in the order of the key, rendered as NDJSON by the database. */
export async function batchQuery(db: Db, source: DumpSource, range: BatchRange) {
  const key = sql.ref(source.key);
  let rows = await rowsOf(db, source);
  if (range.after !== undefined) rows = rows.where(key, '>', range.after);
  if (range.upTo !== undefined) rows = rows.where(key, '<=', range.upTo);
  rows = rows.orderBy(key);
  if (range.limit !== undefined) rows = rows.limit(range.limit);
  const params =
    source.params.length > 0
      ? sql.join(source.params.map((name) => sql`${sql.ref(`t.__p_${name}`)} AS ${sql.id(name)}`))
      : undefined;
  const paramsJson = params ? sql`row_to_json(p)::text` : sql`'{}'`;
  const extraJson = source.extra ? sql`|| ',"extra":' || row_to_json(x)::text` : sql``;
  // Written as text around the two JSON objects: json_build_object would put blanks around its colons and commas.
  // string_agg takes the rows in the order of the ordered subquery, as the lists' pages do (pagination.ts): an
  // ORDER BY inside it sorted each batch again, spilling 4 MB of text to disk every 10,000 issues (3× slower).
  return sql<{ text: string | null; records: number; last: string | null }>`
    ${source.with ? sql`WITH ${source.with}` : sql``}
    SELECT string_agg('{"params":' || ${paramsJson} || ',"record":' || row_to_json(j)::text ${extraJson} || E'}\n', '')
        AS text,
      count(*)::int AS records, max(t.__k)::text AS last
    FROM (${rows}) AS t
    ${params ? sql`CROSS JOIN LATERAL (SELECT ${params}) AS p` : sql``}
    CROSS JOIN LATERAL (SELECT ${sql.join(itemColumns(source.record))}) AS j
    ${source.extra ? sql`CROSS JOIN LATERAL (SELECT ${sql.join(storedColumns(source.extra, '__x_'))}) AS x` : sql``}`;
}

export async function readBatch(db: Db, source: DumpSource, range: BatchRange): Promise<Batch> {
  const { rows } = await (await batchQuery(db, source, range)).execute(db);
  const row = rows[0];
  return { text: row?.text ?? '', records: Number(row?.records ?? 0), last: row?.last ?? undefined };
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
