// The GitHub records as the reader produces them and the writer stores them. Fields carry the column
// names; references to other records are GitHub ids (`*_github_id`), which the writer turns into row ids.

import type { ResourceCounts } from '../base/resource-counts.ts';

export interface OrganizationRecord {
  github_id: number;
  login: string;
  name: string;
  description: string;
  company: string;
  location: string;
  email: string;
  avatar_url: string;
  url: string;
  followers_count: number;
  public_repositories_count: number;
  created_at: string | null;
  updated_at: string | null;
}

export interface MemberRecord {
  github_id: number;
  login: string;
  name: string;
  avatar_url: string;
  url: string;
  bio: string;
  company: string;
  location: string;
  title: string;
  twitter_username: string;
  followers_count: number;
  following_count: number;
  public_repositories_count: number;
  created_at: string | null;
  updated_at: string | null;
}

export interface RepositoryRecord {
  github_id: number;
  owner_login: string;
  owner_github_id: number;
  name: string;
  description: string;
  homepage: string;
  language: string;
  default_branch: string;
  url: string;
  license: string;
  topics: string[];
  is_archived: boolean;
  is_fork: boolean;
  commits_count: number;
  contributors_count: number;
  forks_count: number;
  stars_count: number;
  watchers_count: number;
  open_issues_count: number;
  size: number;
  pushed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface MilestoneRecord {
  github_id: number;
  repository_github_id: number;
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  url: string;
  author_github_id: number | null;
  open_issues_count: number;
  closed_issues_count: number;
  due_on: string | null;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface IssueRecord {
  github_id: number;
  repository_github_id: number;
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  state_reason: string;
  url: string;
  author_github_id: number | null;
  milestone_github_id: number | null;
  comments_count: number;
  is_locked: boolean;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
  /** The issue's labels and assignees: the writer makes the join tables match these lists. */
  label_github_ids: number[];
  assignee_github_ids: number[];
}

export interface LabelRecord {
  github_id: number;
  repository_github_id: number;
  name: string;
  description: string;
  color: string;
  is_default: boolean;
}

export interface ReleaseRecord {
  github_id: number;
  repository_github_id: number;
  tag_name: string;
  name: string;
  description: string;
  url: string;
  author_github_id: number | null;
  is_draft: boolean;
  is_prerelease: boolean;
  published_at: string | null;
  created_at: string;
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
  /** Records left out because their repository is not in the source, or a label without any id. */
  skipped: Record<GithubResource, number>;
}

/** `skipped`: records not stored because their repository is unknown, or labels without any id. */
export type GithubCounts = ResourceCounts & { skipped: number };
export type GithubReport = Record<GithubResource, GithubCounts>;
