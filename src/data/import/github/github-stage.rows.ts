// The rows a stage holds until a batch is full, and the row it makes of a label, milestone or release as read.
import { BATCH_ROWS } from '../../github/github.queries.ts';
import type { PendingLabel, PendingScoped } from '../../github/github.pending.ts';

/**
 * The row a stage sends for a label, milestone or release as read: its place, repository (lower case),
 * description and fields, and for a copy that does not map the index of its error in `errors`.
 */
export function stagedRow(
  pending: PendingLabel | PendingScoped,
  seq: number,
  errors: unknown[],
): [row: Record<string, unknown>, repository: string] {
  const repository = pending.repository.toLowerCase();
  const row: Record<string, unknown> = { seq, repository, description: pending.description, fields: pending.fields };
  if (pending.error !== undefined) row.error = errors.push(pending.error) - 1;
  return [row, repository];
}

/** The rows a stage holds, taken to be sent when a batch is full (`force`: any). */
export function takeRows(stage: { rows: Record<string, unknown>[] }, force: boolean): Record<string, unknown>[] | null {
  if (stage.rows.length === 0 || (!force && stage.rows.length < BATCH_ROWS)) return null;
  const rows = stage.rows;
  stage.rows = [];
  return rows;
}
