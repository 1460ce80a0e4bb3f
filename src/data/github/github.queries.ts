// SQL of the GitHub import (and of the sync that reuses it). A batch travels as one JSON document per
// statement: any number of rows is one round trip, and the column types come from the table itself.
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import type { GithubResource } from './github.records.ts';

export type Row = Record<string, unknown> & { github_id: number };
export type PairTable = 'issue_labels' | 'issue_assignees' | 'organization_members';

const PAIR_COLUMNS: Record<PairTable, [owner: string, other: string]> = {
  issue_labels: ['issue_id', 'label_id'],
  issue_assignees: ['issue_id', 'member_id'],
  organization_members: ['organization_id', 'member_id'],
};

/**
 * Rows per statement. One statement per table made the import hold the whole table as one JSON text (for
 * 1M issues, about a gigabyte, twice: the string and the driver's message). Batches keep that to a few MB;
 * they run in the caller's transaction, so a failing batch still leaves nothing written.
 */
export const BATCH_ROWS = 5_000;

export function* batches<T>(list: readonly T[], size = BATCH_ROWS): Generator<T[]> {
  for (let start = 0; start < list.length; start += size) yield list.slice(start, start + size);
}

export interface UpsertResult {
  inserted: number;
  updated: number;
  /** Row ids of the inserted and updated rows. */
  changed: Set<string>;
}

/**
 * Inserts new rows and updates existing ones (by `github_id`) only where a value differs, so an
 * unchanged row keeps its `nest_updated_at` and is not counted. All rows must have the same keys.
 */
export async function upsertByGithubId(db: Db, table: GithubResource, rows: Row[]): Promise<UpsertResult> {
  const result: UpsertResult = { inserted: 0, updated: 0, changed: new Set() };
  for (const batch of batches(rows)) {
    const written = await upsertBatch(db, table, batch);
    result.inserted += written.inserted;
    result.updated += written.updated;
    for (const id of written.changed) result.changed.add(id);
  }
  return result;
}

async function upsertBatch(db: Db, table: GithubResource, rows: Row[]): Promise<UpsertResult> {
  if (rows.length === 0) return { inserted: 0, updated: 0, changed: new Set() };
  const columns = Object.keys(rows[0]!);
  const values = columns.filter((column) => column !== 'github_id');
  // RETURNING skips rows the WHERE left alone; `xmax = 0` tells an inserted row from an updated one.
  const refs = (prefix: string, names: string[]) => sql.join(names.map((name) => sql.ref(`${prefix}.${name}`)));
  const { rows: written } = await sql<{ id: string; inserted: boolean }>`
    INSERT INTO ${sql.table(table)} AS t (${sql.join(columns.map((column) => sql.ref(column)))})
    SELECT ${refs('r', columns)}
    FROM jsonb_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb) AS r
    ON CONFLICT (github_id) DO UPDATE
    SET ${sql.join(values.map((column) => sql`${sql.ref(column)} = ${sql.ref(`excluded.${column}`)}`))},
      nest_updated_at = now()
    WHERE (${refs('t', values)}) IS DISTINCT FROM (${refs('excluded', values)})
    RETURNING id, (xmax = 0) AS inserted
  `.execute(db);
  const inserted = written.filter((row) => row.inserted).length;
  return { inserted, updated: written.length - inserted, changed: new Set(written.map((row) => row.id)) };
}

/** Row ids of the stored records among `githubIds`, keyed by GitHub id. */
export async function rowIdsByGithubId(
  db: Db,
  table: GithubResource,
  githubIds: number[],
): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  for (const batch of batches([...new Set(githubIds)], BATCH_ROWS * 10)) {
    const { rows } = await sql<{ id: string; github_id: string }>`
      SELECT id, github_id FROM ${sql.table(table)} WHERE github_id = ANY(${batch}::bigint[])
    `.execute(db);
    for (const row of rows) ids.set(Number(row.github_id), row.id);
  }
  return ids;
}

/**
 * Adds the missing pairs and, when `owners` is given, deletes the other pairs of those owners.
 * Returns the owners (row ids) whose pairs changed. With `owners`, every pair of an owner must be in
 * the same call (callers batch by owner); without, the pairs go in batches here.
 */
export async function syncPairs(
  db: Db,
  table: PairTable,
  pairs: [string, string][],
  owners?: string[],
): Promise<Set<string>> {
  if (owners) return syncPairBatch(db, table, pairs, owners);
  const changed = new Set<string>();
  for (const batch of batches(pairs, BATCH_ROWS * 4)) {
    for (const id of await syncPairBatch(db, table, batch)) changed.add(id);
  }
  return changed;
}

async function syncPairBatch(
  db: Db,
  table: PairTable,
  pairs: [string, string][],
  owners?: string[],
): Promise<Set<string>> {
  const [owner, other] = PAIR_COLUMNS[table].map((column) => sql.ref(column));
  const [pairOwners, pairOthers] = [pairs.map((pair) => pair[0]), pairs.map((pair) => pair[1])];
  const removed = owners
    ? sql`DELETE FROM ${sql.table(table)} AS p WHERE p.${owner} = ANY(${owners}::bigint[])
        AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.owner = p.${owner} AND w.other = p.${other})
        RETURNING p.${owner} AS owner`
    : sql`SELECT NULL::bigint AS owner WHERE false`;
  const { rows } = await sql<{ owner: string }>`
    WITH wanted AS (
      SELECT * FROM unnest(${pairOwners}::bigint[], ${pairOthers}::bigint[]) AS w (owner, other)
    ),
    removed AS (${removed}),
    added AS (
      INSERT INTO ${sql.table(table)} (${owner}, ${other}) SELECT owner, other FROM wanted
      ON CONFLICT DO NOTHING RETURNING ${owner} AS owner
    )
    SELECT owner FROM removed UNION SELECT owner FROM added
  `.execute(db);
  return new Set(rows.map((row) => row.owner));
}

/** Marks rows as changed by this service when only their links (labels, assignees, members) changed. */
export async function touchRows(db: Db, table: GithubResource, ids: string[]): Promise<void> {
  for (const batch of batches(ids, BATCH_ROWS * 10)) {
    await sql`UPDATE ${sql.table(table)} SET nest_updated_at = now() WHERE id = ANY(${batch}::bigint[])`.execute(db);
  }
}

/** Whether `table` has no row (a first load). */
export async function tableIsEmpty(db: Db, table: string): Promise<boolean> {
  const { rows } = await sql<{
    empty: boolean;
  }>`SELECT NOT EXISTS (SELECT 1 FROM ${sql.table(table)}) AS empty`.execute(db);
  return rows[0]!.empty;
}

/**
 * Runs `load` with the secondary indexes and the foreign keys of `tables` dropped (and the primary keys of
 * `keyless`, tables no foreign key refers to), then builds them again from their own definitions
 * (pg_indexes, pg_get_constraintdef), in the caller's transaction: for a first load into empty tables, one
 * sort per index and one join per foreign key instead of an index insertion and a lookup per row. Unique
 * indexes and the other primary keys stay, so a duplicate fails where it did; a row without its referenced
 * row fails when its foreign key is added back, still inside the transaction. `load` must only insert into
 * `tables` (no update or delete of their rows): their tombstone triggers may be off meanwhile (see below).
 */
export async function withIndexesRebuilt<T>(
  db: Db,
  tables: string[],
  load: () => Promise<T>,
  keyless: string[] = [],
): Promise<T> {
  if (tables.length === 0) return load();
  const { rows: indexes } = await sql<{ name: string; definition: string }>`
    SELECT i.indexname AS name, i.indexdef AS definition
    FROM pg_indexes i JOIN pg_class c ON c.relname = i.indexname
    JOIN pg_index x ON x.indexrelid = c.oid AND NOT x.indisunique AND NOT x.indisprimary
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = i.schemaname
    WHERE i.schemaname = current_schema() AND i.tablename = ANY(${tables}::text[])
    ORDER BY i.tablename, i.indexname`.execute(db);
  // Foreign keys last when added back (after the keys they may use), first when dropped.
  const { rows: constraints } = await sql<{ table: string; name: string; definition: string }>`
    SELECT t.relname AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
    WHERE t.relname = ANY(${tables}::text[])
      AND (c.contype = 'f' OR (c.contype = 'p' AND t.relname = ANY(${keyless}::text[])
        AND NOT EXISTS (SELECT 1 FROM pg_constraint r WHERE r.contype = 'f' AND r.confrelid = t.oid)))
    ORDER BY c.contype, t.relname, c.conname`.execute(db);
  // The tombstone trigger (migration 0010) of a table into which rows are only inserted takes the tombstones of
  // its resource (named as the table) away as their records come back: with none to take, it does nothing.
  const { rows: idle } = await sql<{ table: string }>`
    SELECT t.relname AS table FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
    WHERE g.tgname = 'cds_tombstone' AND t.relname = ANY(${tables}::text[])
      AND NOT EXISTS (SELECT 1 FROM tombstones WHERE resource = t.relname)`.execute(db);
  for (const { table, name } of constraints)
    await sql`ALTER TABLE ${sql.table(table)} DROP CONSTRAINT ${sql.ref(name)}`.execute(db);
  for (const { name } of indexes) await sql`DROP INDEX ${sql.ref(name)}`.execute(db);
  for (const { table } of idle) await sql`ALTER TABLE ${sql.table(table)} DISABLE TRIGGER cds_tombstone`.execute(db);
  const result = await load();
  for (const { table } of idle) await sql`ALTER TABLE ${sql.table(table)} ENABLE TRIGGER cds_tombstone`.execute(db);
  for (const { definition } of indexes) await sql.raw(definition).execute(db);
  for (const { table, name, definition } of constraints.toReversed())
    await sql`ALTER TABLE ${sql.table(table)} ADD CONSTRAINT ${sql.ref(name)} ${sql.raw(definition)}`.execute(db);
  return result;
}
