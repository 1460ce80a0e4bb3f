// The purge queue's one row (migration 0016): claimed with a lease by one instance at a time, its cursors moved only
// while the lease is still the claimer's and only after the purge API said yes.
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { BASELINES } from '../data/base/baseline.queries.ts';
import { EVERYTHING } from './edge-tags.ts';
import { toChange, type ChangeRow } from '../changes/change-log.queries.ts';
import type { Change } from '../changes/change-log.ts';

export interface PurgeState {
  purged_through: number;
  settled_through: number;
  settle_upto: number;
  settle_due_at: Date | null;
  purged_at: Date | null;
  extra_tags: string[];
  baselines_seen: number;
  /** The count of baselines now (app_meta): above `baselines_seen`, everything is purged. */
  baselines: number;
  failing_since: Date | null;
  failed_attempts: number;
}

interface Row {
  purged_through: string;
  settled_through: string;
  settle_upto: string;
  settle_due_at: Date | string | null;
  purged_at: Date | string | null;
  extra_tags: string[];
  baselines_seen: string;
  baselines: string | null;
  failing_since: Date | string | null;
  failed_attempts: number;
}

const date = (value: Date | string | null) => (value === null ? null : new Date(value));

/**
 * The row, made at the end of the change log when there is none (nothing the edge holds is older than the service
 * that purges it), with a purge of everything to start from a clean edge.
 */
export async function ensurePurgeRow(db: Db): Promise<void> {
  await sql`
    INSERT INTO edge_purge (id, purged_through, settled_through, settle_upto, extra_tags, baselines_seen)
    SELECT 1, m.id, m.id, m.id, ARRAY[${EVERYTHING}]::text[],
           coalesce((SELECT (value #>> '{}')::bigint FROM app_meta WHERE key = ${BASELINES}), 0)
    FROM (SELECT coalesce(max(id), 0) AS id FROM changes) m
    ON CONFLICT (id) DO NOTHING`.execute(db);
}

/**
 * Takes the lease when it is free and there is work due at `now` (changes after the cursor, tags asked for, a baseline
 * not yet purged, a second pass whose time has come; no retry put off past `now`); undefined otherwise. An UPDATE that
 * matches no row writes nothing: this is also the cheap look of every poll.
 */
export async function claimPurge(db: Db, owner: string, now: Date, leaseMs: number): Promise<PurgeState | undefined> {
  const { rows } = await sql<Row>`
    UPDATE edge_purge SET lease_owner = ${owner}, lease_until = ${new Date(now.getTime() + leaseMs)}
    WHERE id = 1
      AND (lease_until IS NULL OR lease_until < ${now} OR lease_owner = ${owner})
      AND (next_attempt_at IS NULL OR next_attempt_at <= ${now})
      AND (purged_through < (SELECT coalesce(max(id), 0) FROM changes)
        OR cardinality(extra_tags) > 0
        OR baselines_seen < coalesce((SELECT (value #>> '{}')::bigint FROM app_meta WHERE key = ${BASELINES}), 0)
        OR (settle_upto > settled_through AND settle_due_at <= ${now}))
    RETURNING purged_through, settled_through, settle_upto, settle_due_at, purged_at, extra_tags, baselines_seen,
      (SELECT value #>> '{}' FROM app_meta WHERE key = ${BASELINES}) AS baselines, failing_since, failed_attempts`.execute(
    db,
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    purged_through: Number(row.purged_through),
    settled_through: Number(row.settled_through),
    settle_upto: Number(row.settle_upto),
    settle_due_at: date(row.settle_due_at),
    purged_at: date(row.purged_at),
    extra_tags: row.extra_tags,
    baselines_seen: Number(row.baselines_seen),
    baselines: Number(row.baselines ?? 0),
    failing_since: date(row.failing_since),
    failed_attempts: row.failed_attempts,
  };
}

/** What a successful purge moves: the first pass's cursor, the second's range, the tags asked for, the baselines. */
export interface Progress {
  purgedThrough?: number;
  /** The first pass's time, with purgedThrough. */
  purgedAt?: Date;
  settledThrough?: number;
  settleUpto?: number;
  settleDueAt?: Date | null;
  /** The lease given back with this step (nothing else is due). */
  release?: boolean;
  /** Tags of `extra_tags` now purged (removed from it; others asked for meanwhile stay). */
  extraDone?: readonly string[];
  baselinesSeen?: number;
}

/** Writes the progress while the lease is the owner's (false: it was lost); a success ends a failing run. */
export async function advancePurge(db: Db, owner: string, progress: Progress, leaseUntil: Date): Promise<boolean> {
  const due = progress.settleDueAt;
  const result = await sql`
    UPDATE edge_purge SET
      purged_through = greatest(purged_through, coalesce(${progress.purgedThrough ?? null}::bigint, purged_through)),
      purged_at = coalesce(${progress.purgedAt ?? null}::timestamptz, purged_at),
      settled_through = greatest(settled_through, coalesce(${progress.settledThrough ?? null}::bigint, settled_through)),
      settle_upto = coalesce(${progress.settleUpto ?? null}::bigint, settle_upto),
      settle_due_at = CASE WHEN ${due !== undefined} THEN ${due ?? null}::timestamptz ELSE settle_due_at END,
      extra_tags = array(SELECT t FROM unnest(extra_tags) AS t WHERE NOT (t = ANY(${sql.val(progress.extraDone ?? [])}::text[]))),
      baselines_seen = coalesce(${progress.baselinesSeen ?? null}::bigint, baselines_seen),
      failed_attempts = 0, failing_since = NULL, next_attempt_at = NULL,
      lease_owner = CASE WHEN ${progress.release === true} THEN NULL ELSE lease_owner END,
      lease_until = CASE WHEN ${progress.release === true} THEN NULL ELSE ${leaseUntil}::timestamptz END
    WHERE id = 1 AND lease_owner = ${owner}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** A failed purge: the next attempt at `nextAttemptAt`, the lease given back, nothing else moved. */
export async function postponePurge(db: Db, owner: string, now: Date, nextAttemptAt: Date): Promise<void> {
  await sql`
    UPDATE edge_purge SET next_attempt_at = ${nextAttemptAt},
      failing_since = coalesce(failing_since, ${now}::timestamptz), failed_attempts = failed_attempts + 1,
      lease_owner = NULL, lease_until = NULL
    WHERE id = 1 AND lease_owner = ${owner}`.execute(db);
}

export async function releasePurge(db: Db, owner: string): Promise<void> {
  await sql`UPDATE edge_purge SET lease_owner = NULL, lease_until = NULL WHERE id = 1 AND lease_owner = ${owner}`.execute(
    db,
  );
}

/** Asks for a purge of tags outside the change log (the dumps after a build); the next look sends them. */
export async function requestPurge(db: Db, tags: readonly string[]): Promise<void> {
  await ensurePurgeRow(db);
  await sql`
    UPDATE edge_purge SET extra_tags = array(SELECT DISTINCT t FROM unnest(extra_tags || ${sql.val(tags)}::text[]) AS t)
    WHERE id = 1`.execute(db);
}

/**
 * The changes after `after`, oldest first, at most `limit`, and the last change id committed, in one statement (one
 * snapshot): every change up to that id is in the page, or after the page's last.
 */
export async function readPurgeBatch(
  db: Db,
  after: number,
  limit: number,
): Promise<{ changes: Change[]; upTo: number }> {
  const { rows } = await sql<ChangeRow & { up_to: string }>`
    SELECT m.up_to, c.* FROM (SELECT coalesce(max(id), 0) AS up_to FROM changes) m
    LEFT JOIN LATERAL (
      SELECT id, resource, action, key, path, occurred_at, data_version, changed_fields FROM changes
      WHERE id > ${after} ORDER BY id LIMIT ${limit}) c ON true`.execute(db);
  return {
    upTo: Number(rows[0]?.up_to ?? 0),
    changes: rows.filter((row) => row.id !== null).map(toChange),
  };
}
