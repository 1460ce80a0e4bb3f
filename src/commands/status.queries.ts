import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

/** Stored records per resource; `*_active` counts what the public lists show. */
export async function countRecords(db: Db): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, number>>`
    SELECT
      (SELECT count(*) FROM chapters)::int AS chapters,
      (SELECT count(*) FROM chapters WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL)::int AS chapters_listed,
      (SELECT count(*) FROM committees)::int AS committees,
      (SELECT count(*) FROM events)::int AS events,
      (SELECT count(*) FROM issues)::int AS issues,
      (SELECT count(*) FROM labels)::int AS labels,
      (SELECT count(*) FROM leaders)::int AS leaders,
      (SELECT count(*) FROM members)::int AS members,
      (SELECT count(*) FROM milestones)::int AS milestones,
      (SELECT count(*) FROM organizations)::int AS organizations,
      (SELECT count(*) FROM projects)::int AS projects,
      (SELECT count(*) FROM releases)::int AS releases,
      (SELECT count(*) FROM repositories)::int AS repositories,
      (SELECT count(*) FROM snapshots)::int AS snapshots,
      (SELECT count(*) FROM sponsors)::int AS sponsors
  `.execute(db);
  return rows[0]!;
}
