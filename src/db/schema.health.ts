// The tables of project health (migration 0016) as Kysely sees them.
import type { ColumnType, Generated, JSONColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Ref = ColumnType<string, string | number | bigint, string | number | bigint>;

export interface PullRequestTable {
  id: Generated<string>;
  github_id: Ref;
  repository_id: Ref;
  number: number;
  state: 'open' | 'closed';
  author_login: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  closed_at: Timestamp | null;
  merged_at: Timestamp | null;
}

export interface ProjectHealthTable {
  project_id: Ref;
  score: number;
  bucket: string;
  coverage: number;
  formula: string;
  computed_at: Timestamp;
  data_version: Ref;
  checks: JSONColumnType<unknown[], string, string>;
  metrics: JSONColumnType<Record<string, unknown>, string, string>;
}

export interface ProjectHealthHistoryTable {
  id: Generated<string>;
  project_key: string;
  /** date: read as `YYYY-MM-DD` (the type parser in db/index.ts). */
  day: ColumnType<string, string, string>;
  score: number;
  bucket: string;
  coverage: number;
  formula: string;
  data_version: Ref;
}

export interface HealthTables {
  pull_requests: PullRequestTable;
  project_health: ProjectHealthTable;
  project_health_history: ProjectHealthHistoryTable;
}
