import { sql } from 'kysely';
import type { Db } from './index.ts';

/** The version of every table that has the trigger of migration 0009 (a table never written yet is at 0). */
export async function readTableVersions(db: Db): Promise<Map<string, number>> {
  const { rows } = await sql<{ name: string; version: string }>`
    SELECT c.relname AS name, coalesce(v.version, 0) AS version
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    LEFT JOIN table_versions v ON v.table_name = c.relname
    WHERE t.tgname = 'cds_table_version'`.execute(db);
  return new Map(rows.map((r) => [r.name, Number(r.version)]));
}
