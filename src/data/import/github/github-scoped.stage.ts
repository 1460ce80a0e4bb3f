// The dataset import's milestones and releases: staged as read, one version of each chosen and written in SQL.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { PendingScoped, ScopedKind } from '../../github/github.pending.ts';
import type { GithubCounts } from '../../github/github.records.ts';
import { REPOSITORY_NAMES, WHOLE_PARTITION, checkStaged, count, upsertChosen } from './github-stage.queries.ts';
import { stagedRow, takeRows } from './github-stage.rows.ts';
/**
 * Milestones and releases as read. A copy is sent unless an earlier copy of the same id and repository
 * ranks as high (github.versions.ts: newer `updated_at`, then more fields), since it could not win; a copy
 * that does not map is sent with the index of its error.
 */
export class ScopedStage {
  rows: Record<string, unknown>[] = [];
  #seq = 0;
  readonly #held = new Map<string, [updated: string | null, fields: number]>();
  readonly errors: unknown[] = [];
  columns: string[] | undefined;
  readonly stage: string;
  readonly chosen: string;

  constructor(
    readonly db: Db,
    readonly kind: ScopedKind,
  ) {
    this.stage = `import_${kind}_stage`;
    this.chosen = `import_${kind}_chosen`;
  }

  add(pending: PendingScoped): void {
    const [row, repository] = stagedRow(pending, this.#seq++, this.errors);
    if (pending.error === undefined) {
      const record = pending.record!;
      const updated = 'updated_at' in record ? record.updated_at : null;
      const key = `${record.github_id}/${repository}`;
      const held = this.#held.get(key);
      if (held) {
        const [heldUpdated, heldFields] = held;
        const wins =
          updated && heldUpdated && updated !== heldUpdated ? updated > heldUpdated : pending.fields > heldFields;
        if (!wins) return;
      }
      this.#held.set(key, [updated, pending.fields]);
      this.columns ??= Object.keys(record);
      Object.assign(row, { github_id: record.github_id, updated, record });
    }
    this.rows.push(row);
  }

  take(force: boolean): Record<string, unknown>[] | null {
    return takeRows(this, force);
  }

  async create(): Promise<void> {
    await sql`CREATE TEMP TABLE ${sql.table(this.stage)} (seq integer, repository text, description text, fields integer,
      error integer, github_id bigint, updated text, record jsonb) ON COMMIT DROP`.execute(this.db);
  }

  /**
   * As resolveScoped (github.resolve.ts) did: throws the first mapping error of a record whose repository
   * is known, chooses one version of each record among those of a known repository (Versions' rule, a total
   * order here: `updated_at` is required of milestones, releases have none) and returns how many were
   * skipped (distinct descriptions of records of an unknown repository).
   */
  async resolve(): Promise<{ skipped: number; total: number }> {
    const db = this.db;
    const stage = sql.table(this.stage);
    await sql`ANALYZE ${stage}`.execute(db);
    const skipped = await checkStaged(db, stage, this.errors);
    await sql`CREATE TEMP TABLE ${sql.table(this.chosen)} ON COMMIT DROP AS
      SELECT DISTINCT ON (s.github_id) s.github_id, r.github_id AS repository_github_id, s.record,
        min(s.seq) OVER (PARTITION BY s.github_id
          ORDER BY s.updated COLLATE "C" DESC NULLS LAST, s.fields DESC, s.seq ${WHOLE_PARTITION}) AS first_seq
      FROM ${stage} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
      WHERE s.error IS NULL
      ORDER BY s.github_id, s.updated COLLATE "C" DESC NULLS LAST, s.fields DESC, s.seq`.execute(db);
    await sql`ANALYZE ${sql.table(this.chosen)}`.execute(db);
    return { skipped, total: await count(db, this.chosen) };
  }

  /** Upserts the chosen records in their repository, with their author (any stored member). */
  async write(counts: GithubCounts): Promise<void> {
    const columns = this.columns?.filter(
      (column) => column !== 'repository_github_id' && column !== 'author_github_id',
    );
    await upsertChosen(
      this.db,
      this.kind,
      this.chosen,
      columns,
      [
        {
          column: 'repository_id',
          value: sql`repository.id`,
          join: sql`JOIN repositories repository ON repository.github_id = c.repository_github_id`,
        },
        {
          column: 'author_id',
          value: sql`author.id`,
          join: sql`LEFT JOIN members author ON author.github_id = (c.record->>'author_github_id')::bigint`,
        },
      ],
      counts,
    );
  }
}
