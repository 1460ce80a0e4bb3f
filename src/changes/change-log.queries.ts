// Reading the change log (migration 0014): a page of changes after an id, the last id, retention.
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../db/index.ts';
import type { DB } from '../db/schema.ts';
import {
  changeType,
  parseChangeType,
  type Change,
  type ChangeAction,
  type ChangeFilter,
  type LoggedResource,
} from './change-log.ts';

const PRUNED = 'changes_pruned';

export interface ChangeRow {
  id: string;
  resource: LoggedResource;
  action: ChangeAction;
  key: string;
  path: string | null;
  occurred_at: Date | string;
  data_version: string;
  changed_fields: string[] | null;
}

export function toChange(row: ChangeRow): Change {
  return {
    id: Number(row.id),
    type: changeType(row.resource, row.action),
    resource: row.resource,
    key: row.key,
    occurred_at: new Date(row.occurred_at).toISOString(),
    data_version: Number(row.data_version),
    changed_fields: row.changed_fields,
    url: row.path === null ? null : `/api/v0/${row.resource}/${row.path}`,
  };
}

/** The conditions of a filter on the table `changes` (its readers: readChanges, the pull feed's list). */
export function changeConditions(eb: ExpressionBuilder<DB, 'changes'>, filter: ChangeFilter): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [];
  if (filter.after !== undefined) parts.push(eb('changes.id', '>', String(filter.after)));
  if (filter.since) parts.push(eb('changes.occurred_at', '>=', filter.since));
  if (filter.resources?.length) parts.push(eb('changes.resource', 'in', [...filter.resources]));
  if (filter.types?.length) {
    const pairs = filter.types.map(parseChangeType).filter((pair) => pair !== undefined);
    parts.push(
      eb.or(
        pairs.map(({ resource, action }) =>
          eb.and([eb('changes.resource', '=', resource), eb('changes.action', '=', action)]),
        ),
      ),
    );
  }
  if (filter.key !== undefined) parts.push(eb('changes.key', '=', filter.key));
  return eb.and(parts);
}

/** The changes that pass the filter, oldest first, at most `limit`. */
export async function readChanges(db: Db, filter: ChangeFilter, limit: number): Promise<Change[]> {
  const rows = await db
    .selectFrom('changes')
    .select(['id', 'resource', 'action', 'key', 'path', 'occurred_at', 'data_version', 'changed_fields'])
    .where((eb) => changeConditions(eb, filter))
    .orderBy('id')
    .limit(limit)
    .execute();
  return (rows as ChangeRow[]).map(toChange);
}

/** The id of the last change committed (0 when none): in a dumps build's snapshot, the last change it includes. */
export async function lastChangeId(db: Db): Promise<number> {
  const { rows } = await sql<{ id: string | null }>`SELECT max(id) AS id FROM changes`.execute(db);
  return Number(rows[0]?.id ?? 0);
}

export interface Retention {
  /** The last id removed by retention (0 when none ever was): asking for changes after an id below it is 410. */
  prunedThrough: number;
  /** Changes before this time may have been removed: asking `since` before it is 410. */
  prunedBefore: Date | undefined;
  /** The oldest change kept (undefined when the log is empty). */
  oldestId: number | undefined;
}

export async function readRetention(db: Db): Promise<Retention> {
  const { rows } = await sql<{ pruned: { through: number; before: string } | null; oldest: string | null }>`
    SELECT (SELECT value FROM app_meta WHERE key = ${PRUNED}) AS pruned, (SELECT min(id) FROM changes) AS oldest`.execute(
    db,
  );
  const row = rows[0];
  return {
    prunedThrough: row?.pruned?.through ?? 0,
    prunedBefore: row?.pruned ? new Date(row.pruned.before) : undefined,
    oldestId: row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest),
  };
}

/**
 * Removes the changes older than `days` before `now`, always keeping the last one (the dumps' manifest names it);
 * returns how many went. Remembers the last id removed and the cut-off, for the 410 of readers asking before them.
 */
export async function pruneChanges(db: Db, days: number, now: Date): Promise<number> {
  const before = new Date(now.getTime() - days * 86_400_000);
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ through: string | null; removed: string }>`
      WITH gone AS (
        DELETE FROM changes WHERE occurred_at < ${before} AND id < (SELECT max(id) FROM changes) RETURNING id
      )
      SELECT max(id) AS through, count(*) AS removed FROM gone`.execute(trx);
    const through = Number(rows[0]?.through ?? 0);
    if (through > 0) {
      const value = JSON.stringify({ through, before: before.toISOString() });
      await sql`
        INSERT INTO app_meta (key, value) VALUES (${PRUNED}, ${value}::jsonb)
        ON CONFLICT (key) DO UPDATE SET value = jsonb_build_object(
          'through', greatest((app_meta.value ->> 'through')::bigint, ${through}::bigint),
          'before', greatest(app_meta.value ->> 'before', ${before.toISOString()})), updated_at = now()`.execute(trx);
    }
    return Number(rows[0]?.removed ?? 0);
  });
}
