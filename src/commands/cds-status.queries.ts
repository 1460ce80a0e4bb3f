import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { RESOURCES } from '../api/v0/resources.ts';

/** One resource in `cds status`: its stored records, and those its list publishes (null: it has no list). */
export interface ResourceCount {
  resource: string;
  stored: number;
  published: number | null;
}

/** The table of each resource whose name is not its table's. */
const TABLES: Record<string, string> = { deleted: 'tombstones' };

/** Stored records that no list publishes, by themselves (leaders are fields of chapters and projects). */
const UNLISTED = ['leaders'];
/** Lists that read other resources' records and store none of their own. */
const VIEWS = new Set(['contribute']);

/**
 * Per resource, in the order of the API's paths: the stored records beside those `GET /api/v0/<resource>/` counts with
 * no filter (its own query), so that the difference is seen rather than guessed (inactive chapters, committees and
 * projects; chapters without coordinates; members and organizations known by login only, not yet fetched).
 */
export async function countRecords(db: Db): Promise<ResourceCount[]> {
  const counts: ResourceCount[] = [];
  for (const { name, operations } of RESOURCES) {
    // A view of other records (`contribute`: issues), no table of its own.
    if (VIEWS.has(name)) continue;
    const list = operations.find((operation) => operation.published);
    counts.push({
      resource: name,
      stored: await countTable(db, TABLES[name] ?? name),
      published: list?.published ? await list.published(db) : null,
    });
  }
  for (const name of UNLISTED) counts.push({ resource: name, stored: await countTable(db, name), published: null });
  return counts;
}

async function countTable(db: Db, table: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
