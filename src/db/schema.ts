// The database as Kysely sees it. Column names are the wire's snake_case.
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { HealthTables } from './schema.health.ts';
import type { WebhookTables } from './schema.webhooks.ts';

/** timestamptz: read as Date, written as Date or ISO string. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamptz with a database default. */
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** date: read as `YYYY-MM-DD` (see the type parser in db/index.ts). */
type DateOnly = ColumnType<string, string, string>;
type Id = Generated<string>;
/** bigint foreign keys come back as strings from the driver. */
type Ref = ColumnType<string, string | number | bigint, string | number | bigint>;
type Json<T extends object | null> = JSONColumnType<T, string, string>;

export type ProjectLevel = 'flagship' | 'production' | 'lab' | 'incubator' | 'other';
export type ProjectType = 'code' | 'documentation' | 'other' | 'tool';
export type EventCategory = 'appsec_days' | 'global' | 'other' | 'partner';
export type IssueState = 'open' | 'closed';

/** Columns the database computes and keeps (GENERATED ALWAYS … STORED): read only. */
type Computed<T> = ColumnType<T, never, never>;

/** The search columns of the searched tables (migration 0011, GET /api/v0/search/). */
interface Searched {
  search_name: Computed<string>;
  /** tsvector, read as its text. */
  search_vector: Computed<string>;
}

interface NestTimestamps {
  nest_created_at: DefaultTimestamp;
  nest_updated_at: DefaultTimestamp;
}

export interface AppMetaTable {
  key: string;
  value: ColumnType<unknown, string, string>;
  updated_at: DefaultTimestamp;
}

export interface ChapterTable extends NestTimestamps, Searched {
  id: Id;
  key: string;
  name: string;
  description: Generated<string>;
  url: string | null;
  country: Generated<string>;
  /** ISO 3166-1 alpha-2 of `country` ('' when unknown); migration 0007. */
  country_code: Generated<string>;
  region: Generated<string>;
  postal_code: Generated<string>;
  suggested_location: Generated<string>;
  level: Generated<string>;
  currency: Generated<string>;
  meetup_group: Generated<string>;
  related_urls: Json<string[]>;
  contribution_data: Json<Record<string, number>>;
  contribution_stats: Json<Record<string, number>>;
  is_active: Generated<boolean>;
  latitude: number | null;
  longitude: number | null;
  /** The position on the unit sphere, generated from latitude and longitude (migration 0012, nearest places). */
  earth: Computed<string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CommitteeTable extends NestTimestamps, Searched {
  id: Id;
  key: string;
  name: string;
  description: Generated<string>;
  url: string | null;
  is_active: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProjectTable extends NestTimestamps, Searched {
  id: Id;
  key: string;
  name: string;
  description: Generated<string>;
  url: string | null;
  level: ProjectLevel;
  type: Generated<ProjectType>;
  /** Lower-case `owner/name` of the project's GitHub repositories (JSON array). */
  repository_paths: ColumnType<string[], string | undefined, string>;
  is_active: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EventTable extends NestTimestamps, Searched {
  id: Id;
  key: string;
  name: string;
  description: Generated<string>;
  summary: Generated<string>;
  category: EventCategory;
  start_date: DateOnly;
  end_date: DateOnly | null;
  url: Generated<string>;
  suggested_location: Generated<string>;
  latitude: number | null;
  longitude: number | null;
  /** The position on the unit sphere, generated from latitude and longitude (migration 0012, nearest places). */
  earth: Computed<string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SponsorTable extends NestTimestamps, Searched {
  id: Id;
  key: string;
  name: string;
  sort_name: Generated<string>;
  sponsor_type: Generated<string>;
  description: Generated<string>;
  url: Generated<string>;
  image_url: Generated<string>;
  job_url: Generated<string>;
  is_member: Generated<boolean>;
  member_type: Generated<string>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface OrganizationTable extends NestTimestamps, Searched {
  id: Id;
  github_id: Ref;
  login: string;
  name: Generated<string>;
  description: Generated<string>;
  company: Generated<string>;
  location: Generated<string>;
  email: Generated<string>;
  avatar_url: Generated<string>;
  url: Generated<string>;
  followers_count: Generated<number>;
  public_repositories_count: Generated<number>;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  /** When the GitHub sync last asked for the profile. */
  profile_checked_at: Timestamp | null;
}

export interface MemberTable extends NestTimestamps, Searched {
  id: Id;
  github_id: Ref;
  login: string;
  name: Generated<string>;
  avatar_url: Generated<string>;
  url: Generated<string>;
  bio: Generated<string>;
  company: Generated<string>;
  location: Generated<string>;
  title: Generated<string>;
  twitter_username: Generated<string>;
  followers_count: Generated<number>;
  following_count: Generated<number>;
  public_repositories_count: Generated<number>;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  /** When the GitHub sync last asked for the profile. */
  profile_checked_at: Timestamp | null;
}

export interface OrganizationMemberTable {
  organization_id: Ref;
  member_id: Ref;
}

export interface RepositoryTable extends NestTimestamps, Searched {
  id: Id;
  github_id: Ref;
  owner_login: string;
  organization_id: Ref | null;
  name: string;
  description: Generated<string>;
  homepage: Generated<string>;
  language: Generated<string>;
  default_branch: Generated<string>;
  url: Generated<string>;
  license: Generated<string>;
  topics: Json<string[]>;
  is_archived: Generated<boolean>;
  is_fork: Generated<boolean>;
  commits_count: Generated<number>;
  contributors_count: Generated<number>;
  forks_count: Generated<number>;
  stars_count: Generated<number>;
  watchers_count: Generated<number>;
  open_issues_count: Generated<number>;
  size: Generated<number>;
  pushed_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MilestoneTable extends NestTimestamps {
  id: Id;
  github_id: Ref;
  repository_id: Ref;
  number: number;
  title: string;
  body: Generated<string>;
  state: IssueState;
  url: Generated<string>;
  author_id: Ref | null;
  open_issues_count: Generated<number>;
  closed_issues_count: Generated<number>;
  due_on: Timestamp | null;
  closed_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IssueTable extends NestTimestamps, Searched {
  id: Id;
  github_id: Ref;
  repository_id: Ref;
  number: number;
  title: string;
  body: Generated<string>;
  state: IssueState;
  state_reason: Generated<string>;
  url: Generated<string>;
  author_id: Ref | null;
  milestone_id: Ref | null;
  comments_count: Generated<number>;
  is_locked: Generated<boolean>;
  closed_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface LabelTable extends NestTimestamps {
  id: Id;
  github_id: Ref;
  repository_id: Ref;
  name: string;
  description: Generated<string>;
  color: string;
  is_default: Generated<boolean>;
}

export interface IssueLabelTable {
  issue_id: Ref;
  label_id: Ref;
}

export interface IssueAssigneeTable {
  issue_id: Ref;
  member_id: Ref;
}

export interface ReleaseTable extends NestTimestamps {
  id: Id;
  github_id: Ref;
  repository_id: Ref;
  tag_name: string;
  name: Generated<string>;
  description: Generated<string>;
  url: Generated<string>;
  author_id: Ref | null;
  is_draft: Generated<boolean>;
  is_prerelease: Generated<boolean>;
  published_at: Timestamp | null;
  created_at: Timestamp;
}

export interface LeaderTable extends NestTimestamps {
  id: Id;
  key: string;
  name: string;
  /** From the website data when it names the leader's GitHub profile; '' otherwise. */
  github_login: Generated<string>;
  member_id: Ref | null;
}

export interface EntityLeaderTable {
  id: Id;
  leader_id: Ref;
  chapter_id: Ref | null;
  committee_id: Ref | null;
  project_id: Ref | null;
  position: Generated<number>;
}

export interface UserTable {
  id: Id;
  github_id: Ref | null;
  login: string;
  name: Generated<string>;
  avatar_url: Generated<string>;
  email: Generated<string>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  last_login_at: Timestamp | null;
}

export interface SessionTable {
  id: Id;
  digest: string;
  user_id: Ref;
  created_at: DefaultTimestamp;
  expires_at: Timestamp;
}

export interface ApiKeyTable {
  id: Id;
  uuid: Generated<string>;
  user_id: Ref;
  name: string;
  digest: string;
  is_revoked: Generated<boolean>;
  revoked_at: Timestamp | null;
  created_at: DefaultTimestamp;
  expires_at: Timestamp;
  last_used_at: Timestamp | null;
  /** The key that replaced this one by rotation (its expiry is then the end of the grace period). */
  replaced_by: Ref | null;
  /** Where GitHub's secret scanning found the key published (it was revoked then). */
  leak_url: string | null;
  leak_source: string | null;
  leak_reported_at: Timestamp | null;
}

export interface SnapshotTable {
  id: Id;
  key: string;
  title: string;
  start_at: Timestamp;
  end_at: Timestamp;
  new_chapters_count: Generated<number>;
  new_issues_count: Generated<number>;
  new_projects_count: Generated<number>;
  new_releases_count: Generated<number>;
  new_users_count: Generated<number>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/** Records that left their list (migration 0010, docs/incremental.md). */
export interface TombstoneTable {
  id: Id;
  resource: string;
  key: string;
  deleted_at: DefaultTimestamp;
}

/** The change log (migration 0014, docs/changes.md): written by triggers only. */
export interface ChangeTable {
  id: Id;
  resource: string;
  action: 'created' | 'updated' | 'deleted';
  key: string;
  /** What follows `/api/v0/<resource>/` in the record's detail path; null when it has none (labels). */
  path: string | null;
  occurred_at: DefaultTimestamp;
  data_version: Ref;
  changed_fields: string[] | null;
}

export interface DB extends WebhookTables, HealthTables {
  app_meta: AppMetaTable;
  chapters: ChapterTable;
  committees: CommitteeTable;
  projects: ProjectTable;
  events: EventTable;
  sponsors: SponsorTable;
  organizations: OrganizationTable;
  members: MemberTable;
  organization_members: OrganizationMemberTable;
  repositories: RepositoryTable;
  milestones: MilestoneTable;
  issues: IssueTable;
  labels: LabelTable;
  issue_labels: IssueLabelTable;
  issue_assignees: IssueAssigneeTable;
  releases: ReleaseTable;
  leaders: LeaderTable;
  entity_leaders: EntityLeaderTable;
  users: UserTable;
  sessions: SessionTable;
  api_keys: ApiKeyTable;
  snapshots: SnapshotTable;
  tombstones: TombstoneTable;
  changes: ChangeTable;
}
