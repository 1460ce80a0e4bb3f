// The records of a dataset import, staged in the database instead of held in memory (issue 12, item 6).
// Issues, labels, organizations, members and repositories are mapped when read and sent, a batch at a
// time, to TEMP tables of the import's transaction; once every response has been read, SQL picks one
// version of each (the rule of github.versions.ts), ties issues and labels to their repository, and
// upserts, links and counts them in a few statements. What Node keeps grows only with the distinct
// accounts, repositories and labels, and by a few bytes each (their rank, to send only the copies that
// could win). The live sync (one unit at a time) keeps the in-memory path of github.write.ts.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type {
  AccountKind,
  AccountRecords,
  CollectSink,
  PendingIssue,
  PendingLabel,
  PendingScoped,
  ScopedKind,
} from '../../github/github.pending.ts';
import { BATCH_ROWS, batches } from '../../github/github.queries.ts';
import type { GithubCounts, GithubData, OrganizationMemberRecord } from '../../github/github.records.ts';
import { AccountStage } from './github-accounts.stage.ts';
import { IssueStage } from './github-issues.stage.ts';
import { LabelStage } from './github-labels.stage.ts';
import { ScopedStage } from './github-scoped.stage.ts';
import {
  LABEL_NAMES,
  LABEL_STAGE,
  LABELS_CHOSEN,
  REPOSITORY_NAMES,
  RUN_IDS,
  checkStaged,
  count,
  createRunIds,
  insertJson,
  keyed,
  upsertChosen,
} from './github-stage.queries.ts';
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
