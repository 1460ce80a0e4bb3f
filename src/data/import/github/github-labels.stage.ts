// The dataset import's labels as read (chosen in SQL by DatasetStage.resolveLabels).
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { PendingLabel } from '../../github/github.pending.ts';
import { stagedRow, takeRows } from './github-stage.rows.ts';
/**
 * Labels as read. Copies with the same id and repository are sent once unless they have more fields
 * (github.collect.ts PendingLabel: the most complete, the first on a tie, at the place first met); a copy
 * that does not map is sent with the index of its error.
 */
export class LabelStage {
  rows: Record<string, unknown>[] = [];
  #seq = 0;
  readonly #fields = new Map<string, number>();
  readonly errors: unknown[] = [];
  columns: string[] | undefined;

  constructor(readonly db: Db) {}

  add(label: PendingLabel): void {
    const [row, repository] = stagedRow(label, this.#seq++, this.errors);
    if (label.error === undefined) {
      const record = label.record!;
      const key = `${record.github_id}/${repository}`;
      const held = this.#fields.get(key);
      if (held !== undefined && label.fields <= held) return;
      this.#fields.set(key, label.fields);
      this.columns ??= Object.keys(record);
      Object.assign(row, { github_id: record.github_id, name_key: record.name.toLowerCase(), record });
    }
    this.rows.push(row);
  }

  async create(): Promise<void> {
    await sql`CREATE TEMP TABLE import_label_stage (seq integer, repository text, description text, fields integer,
      error integer, github_id bigint, name_key text, record jsonb) ON COMMIT DROP`.execute(this.db);
  }

  take(force: boolean): Record<string, unknown>[] | null {
    return takeRows(this, force);
  }
}
