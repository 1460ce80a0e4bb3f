// The importer's SQL. Writes are idempotent: a row is only written when a value really differs, so
// a second import of the same files changes nothing, not even nest_updated_at.
import { sql, type Insertable } from 'kysely';
import type { Db } from '../../db/index.ts';
import type { DB } from '../../db/schema.ts';
import type { LeaderGroup } from './owasp.types.ts';

export type KeyedTable = 'chapters' | 'committees' | 'projects' | 'events' | 'sponsors' | 'leaders';
export type ActiveTable = 'chapters' | 'committees' | 'projects';

/** A row to upsert: its key and the columns the import owns (others, like contribution data, are left alone). */
export type KeyedRow<T extends KeyedTable> = Partial<Insertable<DB[T]>> & { key: string };

export interface Written {
  inserted: number;
  updated: number;
}

// Rows per statement: a few thousand parameters, well under PostgreSQL's 65,535.
const BATCH_SIZE = 250;

/** Inserts unknown keys, updates rows with a differing value; counts both. All rows have the same columns. */
export async function upsertByKey<T extends KeyedTable>(
  db: Db,
  table: T,
  rows: readonly KeyedRow<T>[],
): Promise<Written> {
  const written: Written = { inserted: 0, updated: 0 };
  const columns = Object.keys(rows[0] ?? {});
  const ids = columns.map((column) => sql.id(column));
  const stored = sql.join(columns.map((column) => sql.id(table, column)));
  const incoming = sql.join(columns.map((column) => sql.id('excluded', column)));
  for (let start = 0; start < rows.length; start += BATCH_SIZE) {
    const batch = rows.slice(start, start + BATCH_SIZE) as readonly Record<string, unknown>[];
    const values = batch.map((row) => sql`(${sql.join(columns.map((column) => row[column]))})`);
    // xmax is 0 only on a freshly inserted row version: that tells inserts from updates.
    const result = await sql<{ inserted: boolean }>`
      INSERT INTO ${sql.table(table)} (${sql.join(ids)}) VALUES ${sql.join(values)}
      ON CONFLICT ((lower(key))) DO UPDATE
        SET ${sql.join(columns.map((column) => sql`${sql.id(column)} = ${sql.id('excluded', column)}`))},
            nest_updated_at = now()
        WHERE (${stored}) IS DISTINCT FROM (${incoming})
      RETURNING (xmax = 0) AS inserted`.execute(db);
    for (const row of result.rows) {
      if (row.inserted) written.inserted++;
      else written.updated++;
    }
  }
  return written;
}

/** Marks active rows whose key is not in `keys` inactive; returns how many. Nothing is deleted. */
export async function deactivateMissing(db: Db, table: ActiveTable, keys: readonly string[]): Promise<number> {
  const result = await sql`
    UPDATE ${sql.table(table)} SET is_active = false, nest_updated_at = now()
    WHERE is_active AND NOT (lower(key) = ANY(${keys}::text[]))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** lower(key) → id, for the given keys (all rows when omitted). */
export async function idsByKey(
  db: Db,
  table: ActiveTable | 'leaders',
  keys?: readonly string[],
): Promise<Map<string, string>> {
  const filter = keys ? sql`WHERE lower(key) = ANY(${keys}::text[])` : sql``;
  const result = await sql<{ id: string; key: string }>`
    SELECT id, lower(key) AS key FROM ${sql.table(table)} ${filter}`.execute(db);
  return new Map(result.rows.map((row) => [row.key, String(row.id)]));
}

export interface LinkRow {
  leaderId: string;
  groupId: string;
  position: number;
}

/** Links leaders to the chapters (committees, projects) they lead, at their position in the list. */
export async function upsertLeaderLinks(db: Db, group: LeaderGroup, links: readonly LinkRow[]): Promise<Written> {
  const written: Written = { inserted: 0, updated: 0 };
  const column = sql.id(`${group}_id`);
  for (let start = 0; start < links.length; start += BATCH_SIZE) {
    const values = links
      .slice(start, start + BATCH_SIZE)
      .map((link) => sql`(${link.leaderId}::bigint, ${link.groupId}::bigint, ${link.position}::integer)`);
    const result = await sql<{ inserted: boolean }>`
      INSERT INTO entity_leaders (leader_id, ${column}, position) VALUES ${sql.join(values)}
      ON CONFLICT (${column}, leader_id) WHERE ${column} IS NOT NULL DO UPDATE
        SET position = excluded.position
        WHERE entity_leaders.position IS DISTINCT FROM excluded.position
      RETURNING (xmax = 0) AS inserted`.execute(db);
    for (const row of result.rows) {
      if (row.inserted) written.inserted++;
      else written.updated++;
    }
  }
  return written;
}

/** Deletes this kind of group's links that are not in `links` (a link is not a record to keep). */
export async function deleteOtherLeaderLinks(db: Db, group: LeaderGroup, links: readonly LinkRow[]): Promise<number> {
  const column = sql.id(`${group}_id`);
  const result = await sql`
    DELETE FROM entity_leaders
    WHERE ${column} IS NOT NULL
      AND (${column}, leader_id) NOT IN (
        SELECT * FROM unnest(${links.map((link) => link.groupId)}::bigint[], ${links.map((link) => link.leaderId)}::bigint[]))`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}
