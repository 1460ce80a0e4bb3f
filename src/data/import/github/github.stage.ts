// The records of a dataset import, staged in the database instead of held in memory (issue 12, item 6).
// Issues, labels, organizations, members and repositories are mapped when read and sent, a batch at a
// time, to TEMP tables of the import's transaction; once every response has been read, SQL picks one
// version of each (the rule of github.versions.ts), ties issues and labels to their repository, and
// upserts, links and counts them in a few statements. What Node keeps grows only with the distinct
// accounts, repositories and labels, and by a few bytes each (their rank, to send only the copies that
// could win). The live sync (one unit at a time) keeps the in-memory path of github.write.ts.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/index.ts';
import type {
  AccountKind,
  AccountRecords,
  CollectSink,
  PendingIssue,
  PendingLabel,
  PendingScoped,
  ScopedKind,
} from './github.pending.ts';
import { BATCH_ROWS, batches } from './github.queries.ts';
import type { GithubCounts, GithubData, OrganizationMemberRecord } from './github.records.ts';
import type { LabelOverride } from './github.resolve.ts';

const STAGE = sql.table('import_issue_stage');
const REPOSITORY_NAMES = sql.table('import_repository_names');
const LABEL_NAMES = sql.table('import_label_names');
const LABEL_OVERRIDES = sql.table('import_issue_label_overrides');
const CHOSEN = sql.table('import_issues_chosen');
const WRITTEN = sql.table('import_issues_written');
const RELINKED = sql.table('import_issues_relinked');
const RUN_IDS = sql.table('import_run_ids');
const LABEL_STAGE = sql.table('import_label_stage');
const LABELS_CHOSEN = sql.table('import_labels_chosen');

/**
 * The frame of a window that is ordered only so that its sort is also the one of the DISTINCT ON around it: the
 * aggregate still sees every row of the partition.
 */
const WHOLE_PARTITION = sql.raw('ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING');

/** The columns an issue row gets from its record (references are resolved in SQL). */
const ISSUE_COLUMNS = [
  'github_id',
  'number',
  'title',
  'body',
  'state',
  'state_reason',
  'url',
  'comments_count',
  'is_locked',
  'closed_at',
  'created_at',
  'updated_at',
] as const;

export class IssueStage {
  #seq = 0;
  #created = false;
  /** Mapping errors, by index (`error` column): thrown at the end if the issue's repository is known. */
  readonly errors: unknown[] = [];
  /** Whether any issue names a label without an id (the label-name table is only made then). */
  idLessLabels = false;
  /** Distinct issues stored, once chosen. */
  total = 0;

  /**
   * @param fresh the tables that were empty when the write began (a first load): rows only go in, so their
   *   upserts are plain inserts (nothing to conflict with: one version per id was chosen).
   */
  constructor(
    readonly db: Db,
    readonly fresh: ReadonlySet<string> = new Set(),
  ) {}

  add(pending: PendingIssue): void {
    const row: Record<string, unknown> = {
      seq: this.#seq++,
      repository: pending.repository.toLowerCase(),
      description: pending.description,
      fields: pending.fields,
    };
    if (pending.error !== undefined) {
      row.error = this.errors.push(pending.error) - 1;
    } else {
      const { repository_github_id: _repository, ...record } = pending.record!;
      Object.assign(row, record);
      const names = pending.idLessLabels ?? [];
      if (names.length > 0) {
        this.idLessLabels = true;
        row.id_less_labels = names;
        row.id_less_keys = names.map((name) => name.toLowerCase());
      }
    }
    this.rows.push(row);
  }

  /** Sends the issues read so far once a batch is full (`force`: whatever is left). */
  async flush(force = false): Promise<void> {
    await this.create();
    const rows = this.take(force);
    if (rows) await insertJson(this.db, 'import_issue_stage', rows, BATCH_ROWS);
  }

  /** The rows to send now, if a batch is full (`force`: whatever is left), taken from those held. */
  take(force: boolean): Record<string, unknown>[] | null {
    return takeRows(this, force);
  }

  rows: Record<string, unknown>[] = [];

  async create(): Promise<void> {
    if (this.#created) return;
    this.#created = true;
    await sql`CREATE TEMP TABLE import_issue_stage (
      seq integer, repository text, description text, fields integer, error integer,
      github_id bigint, number integer, title text, body text, state text, state_reason text, url text,
      author_github_id bigint, milestone_github_id bigint, comments_count integer, is_locked boolean,
      closed_at timestamptz, created_at timestamptz, updated_at timestamptz,
      label_github_ids bigint[], assignee_github_ids bigint[], id_less_labels text[], id_less_keys text[]
    ) ON COMMIT DROP`.execute(this.db);
  }

  /**
   * Once every response is read: throws the first mapping error of an issue whose repository is known,
   * chooses one version of each issue, and returns what the report needs — the issues skipped (their
   * repository is not in the source) and the id-less label names that matched no label. The repositories
   * (`import_repository_names`) are chosen already; `labelNames` makes `import_label_names` if needed.
   */
  async resolve(
    overrides: LabelOverride[],
    labelNames: () => Promise<void>,
  ): Promise<{ skippedIssues: number; skippedLabels: number }> {
    await this.flush(true);
    const db = this.db;
    // TEMP tables get no statistics from autovacuum: without them the planner guesses their size.
    await sql`ANALYZE import_issue_stage`.execute(db);

    const skipped = await checkStaged(db, STAGE, this.errors);

    // One version per issue, among those of a known repository; `first_seq` keeps the order issues were first read.
    // (The window is ordered as DISTINCT ON is, over the whole partition: one sort serves both.)
    await sql`CREATE TEMP TABLE import_issues_chosen ON COMMIT DROP AS
      SELECT DISTINCT ON (s.github_id) s.*, r.github_id AS repository_github_id, min(s.seq) OVER (
          PARTITION BY s.github_id ORDER BY s.updated_at DESC, s.fields DESC, s.seq ${WHOLE_PARTITION}) AS first_seq
      FROM ${STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
      ORDER BY s.github_id, s.updated_at DESC, s.fields DESC, s.seq`.execute(db);
    await sql`ANALYZE import_issues_chosen`.execute(db);

    let skippedLabels = 0;
    if (this.idLessLabels) {
      await labelNames();
      // Every copy's id-less names count, as when each copy was resolved on its own.
      const {
        rows: [unmatched],
      } = await sql<{ count: string }>`
        SELECT count(DISTINCT r.github_id::text || '/' || n.name) AS count
        FROM ${STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
        CROSS JOIN unnest(s.id_less_labels, s.id_less_keys) AS n (name, key)
        WHERE NOT EXISTS (SELECT 1 FROM ${LABEL_NAMES} l WHERE l.repository_github_id = r.github_id AND l.name = n.key)`.execute(
        db,
      );
      skippedLabels = Number(unmatched!.count);
      await sql`UPDATE ${CHOSEN} c SET label_github_ids = c.label_github_ids || ARRAY(
          SELECT l.github_id FROM unnest(c.id_less_keys) WITH ORDINALITY AS n (key, i)
          JOIN ${LABEL_NAMES} l ON l.repository_github_id = c.repository_github_id AND l.name = n.key ORDER BY n.i)
        WHERE c.id_less_keys IS NOT NULL`.execute(db);
    }
    // The labels a response lists for one issue replace those of its copies.
    if (overrides.length > 0) {
      await sql`CREATE TEMP TABLE import_issue_label_overrides (repository_github_id bigint, number integer,
        label_github_ids bigint[], PRIMARY KEY (repository_github_id, number)) ON COMMIT DROP`.execute(db);
      await insertJson(
        db,
        'import_issue_label_overrides',
        overrides.map((o) => ({
          repository_github_id: o.repositoryGithubId,
          number: o.number,
          label_github_ids: o.labelGithubIds,
        })),
      );
      await sql`UPDATE ${CHOSEN} c SET label_github_ids = o.label_github_ids FROM ${LABEL_OVERRIDES} o
        WHERE o.repository_github_id = c.repository_github_id AND o.number = c.number`.execute(db);
    }
    const {
      rows: [chosen],
    } = await sql<{ count: string }>`SELECT count(*) AS count FROM ${CHOSEN}`.execute(db);
    this.total = Number(chosen!.count);
    return { skippedIssues: skipped, skippedLabels };
  }

  /**
   * Upserts the chosen issues (only where a value differs, as upsertByGithubId does), with their
   * repository, author (any stored member) and milestone (one stored by this run: in `import_run_ids`).
   */
  async write(counts: GithubCounts): Promise<void> {
    const db = this.db;
    await createRunIds(db);
    await sql`ANALYZE import_run_ids`.execute(db);
    const columns = [...ISSUE_COLUMNS, 'repository_id', 'author_id', 'milestone_id'];
    await sql`CREATE TEMP TABLE import_issues_written (id bigint, inserted boolean) ON COMMIT DROP`.execute(db);
    await sql`
      WITH written AS (
        ${insertInto('issues', columns)}
        SELECT ${refs('c', ISSUE_COLUMNS)}, repository.id, author.id, milestone.id
        FROM ${CHOSEN} c
        JOIN repositories repository ON repository.github_id = c.repository_github_id
        LEFT JOIN members author ON author.github_id = c.author_github_id
        LEFT JOIN ${RUN_IDS} milestone ON milestone.kind = 'milestones' AND milestone.github_id = c.milestone_github_id
        ORDER BY c.first_seq
        ${updateWhereDifferent(columns, this.fresh.has('issues'))}
      )
      INSERT INTO ${WRITTEN} SELECT id, inserted FROM written`.execute(db);
    await countWritten(db, WRITTEN, counts);
    await sql`ANALYZE import_issues_written`.execute(db);
  }

  /**
   * Makes the labels (those stored by this run, in `import_run_ids`) and assignees (any stored member) of
   * every stored issue what its chosen version lists; an issue whose links alone changed is touched and
   * counted as updated, once. On a first load (`fresh` has the issues: their table was empty before this run) every
   * issue was inserted now and has no links yet — the pairs are only added (nothing to delete, nothing to touch).
   */
  async link(counts: GithubCounts): Promise<void> {
    const db = this.db;
    const firstLoad = this.fresh.has('issues');
    await sql`ANALYZE import_run_ids`.execute(db);
    await sql`CREATE TEMP TABLE import_issues_relinked (owner bigint) ON COMMIT DROP`.execute(db);
    const links = [
      {
        table: sql.table('issue_labels'),
        other: sql.ref('label_id'),
        ids: sql.ref('c.label_github_ids'),
        target: sql`SELECT id, github_id FROM ${RUN_IDS} WHERE kind = 'labels'`,
      },
      {
        table: sql.table('issue_assignees'),
        other: sql.ref('member_id'),
        ids: sql.ref('c.assignee_github_ids'),
        target: sql`SELECT id, github_id FROM members`,
      },
    ];
    for (const { table, other, ids, target } of links) {
      const owners = sql`SELECT i.id, ${ids} AS ids FROM ${CHOSEN} c JOIN issues i ON i.github_id = c.github_id`;
      const wanted = sql`SELECT o.id AS owner, target.id AS other
        FROM owners o CROSS JOIN unnest(o.ids) AS g (github_id) JOIN (${target}) target ON target.github_id = g.github_id`;
      if (firstLoad) {
        await sql`WITH owners AS (${owners}), wanted AS (${wanted})
          INSERT INTO ${table} (issue_id, ${other}) SELECT DISTINCT owner, other FROM wanted`.execute(db);
        continue;
      }
      await sql`
        WITH owners AS (${owners}),
        wanted AS (${wanted}),
        removed AS (
          DELETE FROM ${table} AS p USING owners o WHERE p.issue_id = o.id
            AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.owner = p.issue_id AND w.other = p.${other})
          RETURNING p.issue_id AS owner
        ),
        added AS (
          INSERT INTO ${table} (issue_id, ${other}) SELECT owner, other FROM wanted
          ON CONFLICT DO NOTHING RETURNING issue_id AS owner
        )
        INSERT INTO ${RELINKED} SELECT owner FROM removed UNION ALL SELECT owner FROM added`.execute(db);
    }
    if (firstLoad) return;
    // (No DISTINCT above: a repeated pair is inserted once, ON CONFLICT DO NOTHING; EXCEPT removes repeated owners.)
    const {
      rows: [touched],
    } = await sql<{ count: string }>`
      WITH touched AS (
        UPDATE issues SET nest_updated_at = now()
        WHERE id IN (SELECT owner FROM ${RELINKED} EXCEPT SELECT id FROM ${WRITTEN})
        RETURNING 1
      )
      SELECT count(*) AS count FROM touched`.execute(db);
    counts.updated += Number(touched!.count);
  }
}

/** Row ids stored by this run (milestones, labels): references resolve only to those, as in github.write.ts. */
async function createRunIds(db: Db): Promise<void> {
  await sql`CREATE TEMP TABLE IF NOT EXISTS import_run_ids (kind text, github_id bigint, id bigint,
    PRIMARY KEY (kind, github_id)) ON COMMIT DROP`.execute(db);
}

async function insertJson(
  db: Db,
  table: string,
  rows: Record<string, unknown>[],
  size = BATCH_ROWS * 4,
): Promise<void> {
  for (const batch of batches(rows, size)) {
    await sql`INSERT INTO ${sql.table(table)} SELECT * FROM jsonb_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(batch)}::jsonb)`.execute(
      db,
    );
  }
}

/** What stays in Node per distinct record: its rank (github.versions.ts), so only the copies that would win are sent. */
class AccountStage {
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

/**
 * Labels as read. Copies with the same id and repository are sent once unless they have more fields
 * (collect.ts PendingLabel: the most complete, the first on a tie, at the place first met); a copy
 * that does not map is sent with the index of its error.
 */
class LabelStage {
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

/**
 * Milestones and releases as read. A copy is sent unless an earlier copy of the same id and repository
 * ranks as high (github.versions.ts: newer `updated_at`, then more fields), since it could not win; a copy
 * that does not map is sent with the index of its error.
 */
class ScopedStage {
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

/** The dataset import's records: those staged in the database are not in the lists. */
export interface DatasetData extends GithubData {
  staged: DatasetStage;
}

/**
 * The dataset import's staging: the sink the collector sends issues, labels, accounts and repositories
 * to (github.read.ts), then what resolves and writes them (github.write.ts), in the import's transaction.
 */
export class DatasetStage implements CollectSink {
  readonly issues: IssueStage;
  readonly accounts: Record<AccountKind, AccountStage>;
  readonly labels: LabelStage;
  readonly scopedStages: Record<ScopedKind, ScopedStage>;
  /** Distinct records chosen, per resource (the report's totals). */
  readonly totals = { organizations: 0, members: 0, repositories: 0, labels: 0, milestones: 0, releases: 0 };
  #created = false;

  /** The tables that were empty when the write began (github.write.ts): see IssueStage's `fresh`. */
  readonly fresh = new Set<string>();

  constructor(readonly db: Db) {
    this.issues = new IssueStage(db, this.fresh);
    this.labels = new LabelStage(db);
    this.scopedStages = { milestones: new ScopedStage(db, 'milestones'), releases: new ScopedStage(db, 'releases') };
    this.accounts = {
      organizations: new AccountStage(db, 'organizations'),
      members: new AccountStage(db, 'members'),
      repositories: new AccountStage(db, 'repositories'),
    };
  }

  issue(issue: PendingIssue): void {
    this.issues.add(issue);
  }

  label(label: PendingLabel): void {
    this.labels.add(label);
  }

  scoped(kind: ScopedKind, pending: PendingScoped): void {
    this.scopedStages[kind].add(pending);
  }

  account<K extends AccountKind>(kind: K, record: AccountRecords[K], fields: number): void {
    this.accounts[kind].add(record, fields);
  }

  /**
   * Sends what was read once a batch is full (`force`: whatever is left, and waits for it). Without
   * `force` the batch is sent while the caller reads on (the next file is parsed and mapped while the
   * database stores this one); at most one batch is under way, and its error is thrown by the next call.
   */
  async flush(force = false): Promise<void> {
    await this.#sending;
    if (this.#failed) throw this.#failed.error;
    if (!this.#created) {
      this.#created = true;
      for (const stage of [...Object.values(this.accounts), ...Object.values(this.scopedStages)]) await stage.create();
      await this.labels.create();
      await this.issues.create();
    }
    const sends: [string, Record<string, unknown>[]][] = [];
    for (const stage of [...Object.values(this.accounts), ...Object.values(this.scopedStages)]) {
      const rows = stage.take(force);
      if (rows) sends.push([stage.stage, rows]);
    }
    for (const [table, stage] of [
      ['import_label_stage', this.labels],
      ['import_issue_stage', this.issues],
    ] as const) {
      const rows = stage.take(force);
      if (rows) sends.push([table, rows]);
    }
    const send = async () => {
      for (const [table, rows] of sends) await insertJson(this.db, table, rows, BATCH_ROWS);
    };
    if (force) return send();
    this.#sending = send().catch((error: unknown) => {
      this.#failed = { error };
    });
  }

  #sending: Promise<void> = Promise.resolve();
  #failed: { error: unknown } | undefined;

  /** One version of each organization, member and repository; the repositories by name (`import_repository_names`). */
  async chooseAccounts(): Promise<void> {
    await this.flush(true);
    const db = this.db;
    for (const [kind, stage] of Object.entries(this.accounts)) this.totals[kind as AccountKind] = await stage.choose();
    // As a Map filled in the order records were first met: the last of two repositories with one name wins.
    await sql`CREATE TEMP TABLE import_repository_names (name text PRIMARY KEY, github_id bigint NOT NULL) ON COMMIT DROP`.execute(
      db,
    );
    await sql`INSERT INTO ${REPOSITORY_NAMES} SELECT DISTINCT ON (key) key, github_id
      FROM import_repositories_chosen ORDER BY key, first_seq DESC`.execute(db);
    await sql`ANALYZE import_repository_names`.execute(db);
  }

  /** GitHub ids of the repositories among `names` (lower-case `owner/name`). */
  async repositoryIds(names: string[]): Promise<Map<string, number>> {
    return keyed(
      this.db,
      sql<{
        key: string;
        github_id: string;
      }>`SELECT name AS key, github_id FROM ${REPOSITORY_NAMES} WHERE name = ANY(${[...new Set(names)]}::text[])`,
    );
  }

  /** GitHub ids of the organizations among `logins` (lower-case), the last met of two with one login. */
  async organizationIds(logins: string[]): Promise<Map<string, number>> {
    return keyed(
      this.db,
      sql<{ key: string; github_id: string }>`SELECT DISTINCT ON (key) key, github_id FROM import_organizations_chosen
      WHERE key = ANY(${[...new Set(logins)]}::text[]) ORDER BY key, first_seq DESC`,
    );
  }

  /**
   * Throws the first mapping error of a label whose repository is known, chooses one version of each
   * label (github.versions.ts: the most fields, the first met on a tie) and returns how many labels were
   * skipped (their repository is not in the source).
   */
  async resolveLabels(): Promise<number> {
    const db = this.db;
    await sql`ANALYZE import_label_stage`.execute(db);
    const skipped = await checkStaged(db, LABEL_STAGE, this.labels.errors);
    await sql`CREATE TEMP TABLE import_labels_chosen ON COMMIT DROP AS
      WITH copies AS (
        SELECT DISTINCT ON (s.github_id, s.repository) s.github_id, r.github_id AS repository_github_id, s.name_key,
          s.fields, s.record, min(s.seq) OVER (PARTITION BY s.github_id, s.repository) AS place
        FROM ${LABEL_STAGE} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
        WHERE s.error IS NULL
        ORDER BY s.github_id, s.repository, s.seq DESC
      )
      SELECT DISTINCT ON (github_id) github_id, repository_github_id, name_key, record,
        min(place) OVER (PARTITION BY github_id) AS first_seq
      FROM copies ORDER BY github_id, fields DESC, place`.execute(db);
    await sql`ANALYZE import_labels_chosen`.execute(db);
    this.totals.labels = await count(db, 'import_labels_chosen');
    return skipped;
  }

  /** `import_label_names`: labels by repository and lower-case name; of two with one name, the last met. */
  async labelNames(): Promise<void> {
    const db = this.db;
    await sql`CREATE TEMP TABLE import_label_names (repository_github_id bigint, name text, github_id bigint,
      PRIMARY KEY (repository_github_id, name)) ON COMMIT DROP`.execute(db);
    await sql`INSERT INTO ${LABEL_NAMES} SELECT DISTINCT ON (repository_github_id, name_key) repository_github_id, name_key, github_id
      FROM ${LABELS_CHOSEN} ORDER BY repository_github_id, name_key, first_seq DESC`.execute(db);
    await sql`ANALYZE import_label_names`.execute(db);
  }

  /** Upserts the chosen organizations or members; returns the row ids inserted or updated when `changed`. */
  async writeAccounts(kind: 'organizations' | 'members', counts: GithubCounts, changed = false): Promise<Set<string>> {
    const stage = this.accounts[kind];
    return upsertChosen(this.db, kind, stage.chosen, stage.columns, [], counts, {
      changed,
      fresh: this.fresh.has(kind),
    });
  }

  /** Upserts the chosen repositories, with their organization (any stored one) for their owner. */
  async writeRepositories(counts: GithubCounts): Promise<void> {
    const stage = this.accounts.repositories;
    const columns = stage.columns?.filter((column) => column !== 'owner_github_id');
    await upsertChosen(
      this.db,
      'repositories',
      stage.chosen,
      columns,
      [
        {
          column: 'organization_id',
          value: sql`owner.id`,
          join: sql`LEFT JOIN organizations owner ON owner.github_id = (c.record->>'owner_github_id')::bigint`,
        },
      ],
      counts,
      { fresh: this.fresh.has('repositories') },
    );
  }

  /** Milestones or releases: see ScopedStage.resolve. Returns how many were skipped. */
  async resolveScoped(kind: ScopedKind): Promise<number> {
    const { skipped, total } = await this.scopedStages[kind].resolve();
    this.totals[kind] = total;
    return skipped;
  }

  /** Upserts the chosen milestones or releases; the milestones' row ids are noted for the issues (`import_run_ids`). */
  async writeScoped(kind: ScopedKind, counts: GithubCounts): Promise<void> {
    const stage = this.scopedStages[kind];
    await stage.write(counts);
    if (kind !== 'milestones') return;
    await createRunIds(this.db);
    await sql`INSERT INTO ${RUN_IDS} SELECT 'milestones', c.github_id, m.id FROM ${sql.table(stage.chosen)} c
      JOIN milestones m ON m.github_id = c.github_id`.execute(this.db);
  }

  /** Upserts the chosen labels in their repository, and notes their row ids for the issues' links (`import_run_ids`). */
  async writeLabels(counts: GithubCounts): Promise<void> {
    const db = this.db;
    const columns = this.labels.columns?.filter((column) => column !== 'repository_github_id');
    await upsertChosen(
      db,
      'labels',
      'import_labels_chosen',
      columns,
      [
        {
          column: 'repository_id',
          value: sql`repository.id`,
          join: sql`JOIN repositories repository ON repository.github_id = c.repository_github_id`,
        },
      ],
      counts,
      { fresh: this.fresh.has('labels') },
    );
    await createRunIds(db);
    await sql`INSERT INTO ${RUN_IDS} SELECT 'labels', c.github_id, l.id FROM ${LABELS_CHOSEN} c
      JOIN labels l ON l.github_id = c.github_id`.execute(db);
  }

  /** Row-id pairs of the memberships whose organization and member were both stored by this run, in order. */
  async membershipPairs(records: OrganizationMemberRecord[]): Promise<[string, string][]> {
    const pairs: [string, string][] = [];
    for (const batch of batches(records, BATCH_ROWS * 4)) {
      const { rows } = await sql<{ organization: string; member: string }>`
        SELECT o.id AS organization, m.id AS member
        FROM unnest(${batch.map((r) => r.organization_github_id)}::bigint[], ${batch.map((r) => r.member_github_id)}::bigint[])
          WITH ORDINALITY AS p (organization, member, n)
        JOIN import_organizations_chosen co ON co.github_id = p.organization
        JOIN organizations o ON o.github_id = p.organization
        JOIN import_members_chosen cm ON cm.github_id = p.member
        JOIN members m ON m.github_id = p.member
        ORDER BY p.n`.execute(this.db);
      for (const row of rows) pairs.push([row.organization, row.member]);
    }
    return pairs;
  }
}

/** The rows a stage holds, taken to be sent when a batch is full (`force`: any). */
/**
 * The row a stage sends for a label, milestone or release as read: its place, repository (lower case),
 * description and fields, and for a copy that does not map the index of its error in `errors`.
 */
function stagedRow(
  pending: PendingLabel | PendingScoped,
  seq: number,
  errors: unknown[],
): [row: Record<string, unknown>, repository: string] {
  const repository = pending.repository.toLowerCase();
  const row: Record<string, unknown> = { seq, repository, description: pending.description, fields: pending.fields };
  if (pending.error !== undefined) row.error = errors.push(pending.error) - 1;
  return [row, repository];
}

function takeRows(stage: { rows: Record<string, unknown>[] }, force: boolean): Record<string, unknown>[] | null {
  if (stage.rows.length === 0 || (!force && stage.rows.length < BATCH_ROWS)) return null;
  const rows = stage.rows;
  stage.rows = [];
  return rows;
}

interface Reference {
  column: string;
  value: RawBuilder<unknown>;
  join: RawBuilder<unknown>;
}

/**
 * Upserts the chosen records of a TEMP table (`github_id`, `record` jsonb, `first_seq`) into `table`, in
 * the order first met, only where a value differs (as upsertByGithubId does, and with the same jsonb to
 * column conversion); `columns`: the record's keys that are columns, `references`: columns joined in;
 * `changed`: return the ids of the rows written; `fresh`: the table was empty (updateWhereDifferent).
 */
async function upsertChosen(
  db: Db,
  table: string,
  chosen: string,
  recordColumns: string[] | undefined,
  references: Reference[],
  counts: GithubCounts,
  { changed = false, fresh = false }: { changed?: boolean; fresh?: boolean } = {},
): Promise<Set<string>> {
  if (recordColumns === undefined) return new Set();
  const columns = [...recordColumns, ...references.map((reference) => reference.column)];
  const written = sql.table(`import_${table}_written`);
  await sql`CREATE TEMP TABLE ${written} (id bigint, inserted boolean) ON COMMIT DROP`.execute(db);
  await sql`
    WITH written AS (
      ${insertInto(table, columns)}
      SELECT ${refs('r', recordColumns)}${sql.join(
        references.map((reference) => sql`, ${reference.value}`),
        sql``,
      )}
      FROM ${sql.table(chosen)} c
      CROSS JOIN LATERAL jsonb_populate_record(NULL::${sql.table(table)}, c.record) r
      ${sql.join(
        references.map((reference) => reference.join),
        sql` `,
      )}
      ORDER BY c.first_seq
      ${updateWhereDifferent(columns, fresh)}
    )
    INSERT INTO ${written} SELECT id, inserted FROM written`.execute(db);
  await countWritten(db, written, counts);
  if (!changed) return new Set();
  const { rows } = await sql<{ id: string }>`SELECT id FROM ${written}`.execute(db);
  return new Set(rows.map((row) => row.id));
}

const refs = (prefix: string, names: readonly string[]) => sql.join(names.map((name) => sql.ref(`${prefix}.${name}`)));

/** `INSERT INTO table AS t (columns)`, the head of the upserts by github_id below. */
const insertInto = (table: string, columns: readonly string[]) =>
  sql`INSERT INTO ${sql.table(table)} AS t (${sql.join(columns.map((column) => sql.ref(column)))})`;

/**
 * The tail of an upsert by github_id: a stored row is updated only where one of its values differs, and
 * every row written is returned with whether it was new (read by countWritten). `fresh`: the table was
 * empty and the rows have distinct ids, so none can conflict; a plain insert skips the speculative one.
 */
function updateWhereDifferent(columns: readonly string[], fresh = false): RawBuilder<unknown> {
  if (fresh) return sql`RETURNING t.id, (xmax = 0) AS inserted`;
  const values = columns.filter((column) => column !== 'github_id');
  return sql`ON CONFLICT (github_id) DO UPDATE
    SET ${sql.join(values.map((column) => sql`${sql.ref(column)} = ${sql.ref(`excluded.${column}`)}`))},
      nest_updated_at = now()
    WHERE (${refs('t', values)}) IS DISTINCT FROM (${refs('excluded', values)})
    RETURNING t.id, (xmax = 0) AS inserted`;
}

/** Adds the rows of a `written` table (id, inserted) to the counts: inserted or updated. */
async function countWritten(db: Db, written: RawBuilder<unknown>, counts: GithubCounts): Promise<void> {
  const {
    rows: [result],
  } = await sql<{ inserted: string; updated: string }>`
    SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated
    FROM ${written}`.execute(db);
  counts.inserted += Number(result!.inserted);
  counts.updated += Number(result!.updated);
}

/**
 * Throws the first mapping error (in reading order) of a staged record whose repository is known, and
 * returns how many distinct records were skipped for belonging to a repository absent from the source.
 */
async function checkStaged(db: Db, stage: RawBuilder<unknown>, errors: unknown[]): Promise<number> {
  const { rows: failed } = await sql<{ error: number }>`
    SELECT s.error FROM ${stage} s JOIN ${REPOSITORY_NAMES} r ON r.name = s.repository
    WHERE s.error IS NOT NULL ORDER BY s.seq LIMIT 1`.execute(db);
  if (failed[0]) throw errors[failed[0].error];
  const {
    rows: [skipped],
  } = await sql<{ count: string }>`
    SELECT count(DISTINCT s.description) AS count FROM ${stage} s
    WHERE NOT EXISTS (SELECT 1 FROM ${REPOSITORY_NAMES} r WHERE r.name = s.repository)`.execute(db);
  return Number(skipped!.count);
}

async function count(db: Db, table: string): Promise<number> {
  const {
    rows: [row],
  } = await sql<{ count: string }>`SELECT count(*) AS count FROM ${sql.table(table)}`.execute(db);
  return Number(row!.count);
}

async function keyed(db: Db, query: RawBuilder<{ key: string; github_id: string }>): Promise<Map<string, number>> {
  const { rows } = await query.execute(db);
  return new Map(rows.map((row) => [row.key, Number(row.github_id)]));
}

/**
 * The import's phase trace: with IMPORT_TRACE=1 in the environment, each phase of a dataset import prints
 * its seconds and the process's memory to stderr (how docs/decisions.md "import-mem" was measured).
 */
export function tracePhase(phase: string): void {
  if (process.env.IMPORT_TRACE !== '1') return;
  const now = performance.now();
  const cpu = process.cpuUsage();
  const { rss, heapUsed } = process.memoryUsage();
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  const seconds = (micros: number) => (micros / 1e6).toFixed(1);
  // Node's own CPU time in the phase (all its threads: the rest of the wall time is waiting, mostly for the database).
  process.stderr.write(
    `import phase ${phase}: ${((now - lastPhase) / 1000).toFixed(1)} s, node cpu ${seconds(cpu.user + cpu.system - lastCpu)} s, rss ${mb(rss)} MB, heap ${mb(heapUsed)} MB (at ${(now / 1000).toFixed(1)} s)\n`,
  );
  lastPhase = now;
  lastCpu = cpu.user + cpu.system;
}
let lastPhase = performance.now();
let lastCpu = 0;
