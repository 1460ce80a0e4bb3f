// The dataset import's organizations, members and repositories: only the copies that could win are sent, one is chosen in SQL.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { AccountKind, AccountRecords } from '../../github/github.pending.ts';
import { WHOLE_PARTITION, count } from './github-stage.queries.ts';
import { takeRows } from './github-stage.rows.ts';
/** What stays in Node per distinct record: its rank (github.versions.ts), so only the copies that would win are sent. */
export class AccountStage {
  /** Copies read but not yet sent. */
  rows: Record<string, unknown>[] = [];
  #seq = 0;
  readonly #fields = new Map<number, number>();
  readonly #updated = new Map<number, string>();
  /** The record's keys (the columns it gives), from the first one. */
  columns: string[] | undefined;
  readonly stage: string;
  readonly chosen: string;

  constructor(
    readonly db: Db,
    readonly kind: AccountKind,
  ) {
    this.stage = `import_${kind}_stage`;
    this.chosen = `import_${kind}_chosen`;
  }

  /**
   * Sends the copy only if it wins over the one held (Versions' rule: the newer `updated_at` when both
   * have one and they differ, else more fields; a tie keeps the first): the last copy sent of an id is
   * the version Versions would keep, and its first copy sent is where Versions first met it.
   */
  add<K extends AccountKind>(record: AccountRecords[K], fields: number): void {
    const id = record.github_id;
    const updated = typeof record.updated_at === 'string' ? record.updated_at : null;
    const heldFields = this.#fields.get(id);
    if (heldFields !== undefined) {
      const heldUpdated = this.#updated.get(id);
      const wins = updated && heldUpdated && updated !== heldUpdated ? updated > heldUpdated : fields > heldFields;
      if (!wins) return;
    }
    this.#fields.set(id, fields);
    if (updated === null) this.#updated.delete(id);
    else this.#updated.set(id, updated);
    this.columns ??= Object.keys(record);
    // The keys records are found by: a repository by lower-case `owner/name`, an organization by lower-case login.
    let key: string | null = null;
    if ('owner_login' in record) key = `${record.owner_login}/${record.name}`.toLowerCase();
    else if (this.kind === 'organizations') key = record.login.toLowerCase();
    this.rows.push({ seq: this.#seq++, github_id: id, key, record });
  }

  async create(): Promise<void> {
    await sql`CREATE TEMP TABLE ${sql.table(this.stage)} (seq integer, github_id bigint, key text, record jsonb) ON COMMIT DROP`.execute(
      this.db,
    );
  }

  take(force: boolean): Record<string, unknown>[] | null {
    return takeRows(this, force);
  }

  /** One version per id: the last copy sent, at the place of the first. Returns how many. */
  async choose(): Promise<number> {
    const db = this.db;
    await sql`CREATE TEMP TABLE ${sql.table(this.chosen)} ON COMMIT DROP AS
      SELECT DISTINCT ON (github_id) github_id, key, record,
        min(seq) OVER (PARTITION BY github_id ORDER BY seq DESC ${WHOLE_PARTITION}) AS first_seq
      FROM ${sql.table(this.stage)} ORDER BY github_id, seq DESC`.execute(db);
    await sql`ANALYZE ${sql.table(this.chosen)}`.execute(db);
    return count(db, this.chosen);
  }
}
