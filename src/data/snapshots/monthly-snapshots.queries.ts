// Snapshots: one per completed calendar month (UTC) in which at least one record was first created,
// as the reference's monthly snapshots (docs/decisions.md, "snapshots"). A record is new in the month
// its `created_at` falls in; which records count is decided here once, for the counts and the sub-lists.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/index.ts';

export type SnapshotKind = 'chapters' | 'issues' | 'projects' | 'releases' | 'users';

/**
 * The records a snapshot counts, by kind: the table and the condition on its rows besides the date.
 * The same rows the public lists publish (active chapters with coordinates, active projects), the
 * reference's rule for releases (neither drafts nor pre-releases), and members whose profile dates are
 * known (a member without dates belongs to no period).
 */
export const NEW_RECORDS: Record<SnapshotKind, { table: string; where: RawBuilder<boolean> }> = {
  chapters: {
    table: 'chapters',
    where: sql<boolean>`chapters.is_active AND chapters.latitude IS NOT NULL AND chapters.longitude IS NOT NULL`,
  },
  issues: { table: 'issues', where: sql<boolean>`true` },
  projects: { table: 'projects', where: sql<boolean>`projects.is_active` },
  releases: { table: 'releases', where: sql<boolean>`NOT releases.is_draft AND NOT releases.is_prerelease` },
  users: { table: 'members', where: sql<boolean>`members.updated_at IS NOT NULL` },
};

const KINDS = Object.keys(NEW_RECORDS) as SnapshotKind[];

export interface RebuildResult {
  /** Snapshots stored after the rebuild. */
  snapshots: number;
  added: number;
  updated: number;
  removed: number;
}

/**
 * Makes the snapshots table match the stored records as of `now`, in one statement: a snapshot for
 * every completed month with a new record, its counts, and none for other months. Idempotent: a
 * snapshot's row (and its `updated_at`) changes only when its counts do. The caller holds the write lock.
 */
export async function rebuildSnapshots(db: Db, now: Date): Promise<RebuildResult> {
  // Months are truncated as UTC wall-clock timestamps: cheaper per row than date_trunc with a time zone.
  const currentMonth = sql`(date_trunc('month', ${now.toISOString()}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;
  // Counted per table, then per month: each table is read once, and never as rows of a union.
  const perTable = sql.join(
    KINDS.map((kind) => {
      const { table, where } = NEW_RECORDS[kind];
      return sql`SELECT ${kind}::text AS kind, date_trunc('month', created_at AT TIME ZONE 'UTC') AS month, count(*)::int AS n
        FROM ${sql.table(table)}
        WHERE created_at < ${currentMonth} AND ${where}
        GROUP BY 2`;
    }),
    sql` UNION ALL `,
  );
  const counts = sql.join(
    KINDS.map((kind) => sql`coalesce(sum(n) FILTER (WHERE kind = ${kind}), 0)::int AS ${sql.id(`new_${kind}_count`)}`),
  );
  const columns = sql.join(KINDS.map((kind) => sql.id(`new_${kind}_count`)));
  const excluded = sql.join(KINDS.map((kind) => sql`excluded.${sql.id(`new_${kind}_count`)}`));
  const stored = sql.join(KINDS.map((kind) => sql`s.${sql.id(`new_${kind}_count`)}`));
  const assignments = sql.join(
    KINDS.map((kind) => sql`${sql.id(`new_${kind}_count`)} = excluded.${sql.id(`new_${kind}_count`)}`),
  );
  const { rows } = await sql<{ snapshots: number; added: number; updated: number; removed: number }>`
    WITH months AS (
      SELECT month, ${counts} FROM (${perTable}) AS per_table GROUP BY month
    ),
    periods AS (
      SELECT to_char(month, 'YYYY-MM') AS key,
        to_char(month, 'FMMonth YYYY') || ' Snapshot' AS title,
        month AT TIME ZONE 'UTC' AS start_at,
        (month + interval '1 month') AT TIME ZONE 'UTC' - interval '1 microsecond' AS end_at,
        ${columns}
      FROM months
    ),
    removed AS (
      DELETE FROM snapshots WHERE NOT EXISTS (SELECT 1 FROM periods WHERE periods.key = snapshots.key) RETURNING 1
    ),
    upserted AS (
      INSERT INTO snapshots AS s (key, title, start_at, end_at, ${columns}, created_at, updated_at)
      SELECT key, title, start_at, end_at, ${columns}, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
      FROM periods ORDER BY start_at
      ON CONFLICT (key) DO UPDATE SET ${assignments}, updated_at = excluded.updated_at
      WHERE (${stored}) IS DISTINCT FROM (${excluded})
      RETURNING (xmax = 0) AS inserted
    )
    SELECT (SELECT count(*) FROM periods)::int AS snapshots,
      (SELECT count(*) FROM upserted WHERE inserted)::int AS added,
      (SELECT count(*) FROM upserted WHERE NOT inserted)::int AS updated,
      (SELECT count(*) FROM removed)::int AS removed
  `.execute(db);
  return rows[0]!;
}

export function snapshotsChanged(result: RebuildResult): boolean {
  return result.added + result.updated + result.removed > 0;
}
