// The GitHub records as the reader produces them and the writer stores them. Their fields are the columns of
// github.columns.ts, typed by src/db/schema.ts; references to other records are GitHub ids (`*_github_id`), which the
// writer turns into row ids.

import type { ResourceCounts } from '../base/resource-counts.ts';
import type {
  ISSUE_COLUMNS,
  LABEL_COLUMNS,
  MEMBER_COLUMNS,
  MILESTONE_COLUMNS,
  ORGANIZATION_COLUMNS,
  RecordOf,
  RELEASE_COLUMNS,
  REPOSITORY_COLUMNS,
} from './github.columns.ts';

/** A GitHub id of another record (resolved to its row id by the writer); null: none. */
type GithubIdOf = number | null;

export type OrganizationRecord = RecordOf<'organizations', typeof ORGANIZATION_COLUMNS>;

export type MemberRecord = RecordOf<'members', typeof MEMBER_COLUMNS>;

export type RepositoryRecord = RecordOf<'repositories', typeof REPOSITORY_COLUMNS> & { owner_github_id: number };

export type MilestoneRecord = RecordOf<'milestones', typeof MILESTONE_COLUMNS> & {
  repository_github_id: number;
  author_github_id: GithubIdOf;
};

export type IssueRecord = RecordOf<'issues', typeof ISSUE_COLUMNS> & {
  repository_github_id: number;
  author_github_id: GithubIdOf;
  milestone_github_id: GithubIdOf;
  /** The issue's labels and assignees: the writer makes the join tables match these lists. */
  label_github_ids: number[];
  assignee_github_ids: number[];
};

export type LabelRecord = RecordOf<'labels', typeof LABEL_COLUMNS> & { repository_github_id: number };

export type ReleaseRecord = RecordOf<'releases', typeof RELEASE_COLUMNS> & {
  repository_github_id: number;
  author_github_id: GithubIdOf;
};

/**
 * A pull request as the issues listing gives it (an item with `pull_request`): kept for the health checks only, not a
 * published record (migration 0016). Its repository is named by its lower-case `owner/name`.
 */
export interface PullRequestRecord {
  github_id: number;
  repository: string;
  number: number;
  state: 'open' | 'closed';
  author_login: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  merged_at: string | null;
}

export interface OrganizationMemberRecord {
  organization_github_id: number;
  member_github_id: number;
}

export const GITHUB_RESOURCES = [
  'organizations',
  'members',
  'repositories',
  'issues',
  'labels',
  'milestones',
  'releases',
] as const;
export type GithubResource = (typeof GITHUB_RESOURCES)[number];

export interface GithubData {
  organizations: OrganizationRecord[];
  members: MemberRecord[];
  repositories: RepositoryRecord[];
  milestones: MilestoneRecord[];
  issues: IssueRecord[];
  labels: LabelRecord[];
  releases: ReleaseRecord[];
  /** Memberships seen in the source; the writer only adds them (member lists are partial, e.g. one page). */
  organizationMembers: OrganizationMemberRecord[];
  /** Pull requests met in issue listings (absent: none read); stored when their repository is. */
  pullRequests?: PullRequestRecord[];
  /** Records left out because their repository is not in the source, or a label without any id. */
  skipped: Record<GithubResource, number>;
}

/** `skipped`: records not stored because their repository is unknown, or labels without any id. */
export type GithubCounts = ResourceCounts & { skipped: number };
export type GithubReport = Record<GithubResource, GithubCounts>;
