// The example record of a detail (Operation.example in resource.ts): the first row, by id, that the detail serves.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';

/** `column` of the first row of `table`; `active`: only active records; `present`: columns that must be set. */
export async function firstOf(
  db: Db,
  table: string,
  column: string,
  { active = false, present = [] }: { active?: boolean; present?: string[] } = {},
): Promise<string | undefined> {
  const conditions = [
    sql`TRUE`,
    ...(active ? [sql`is_active`] : []),
    ...present.map((name) => sql`${sql.ref(name)} IS NOT NULL`),
  ];
  const { rows } = await sql<{ value: string }>`
    SELECT ${sql.ref(column)}::text AS value FROM ${sql.table(table)}
    WHERE ${sql.join(conditions, sql` AND `)} ORDER BY id LIMIT 1`.execute(db);
  return rows[0]?.value;
}

/** The path parameters of the first record of `table`: its repository's and `column` as `param`. */
export async function firstInRepository<K extends string>(
  db: Db,
  table: 'issues' | 'milestones' | 'releases',
  column: 'number' | 'tag_name',
  param: K,
): Promise<Record<'organization_id' | 'repository_id' | K, string> | undefined> {
  const { rows } = await sql<Record<'organization_id' | 'repository_id' | K, string>>`
    SELECT r.owner_login AS organization_id, r.name AS repository_id, x.${sql.ref(column)}::text AS ${sql.ref(param)}
    FROM ${sql.table(table)} x JOIN repositories r ON r.id = x.repository_id ORDER BY x.id LIMIT 1`.execute(db);
  return rows[0];
}
