// Records as the reader holds them between reading a response and resolving it: repository-scoped objects
// wait for their repository, which is only known once every response has been read. The collector
// (github.collect.ts) produces these, the resolver (github.resolve.ts) and the dataset import's staging
// (import/github/*.stage.ts) consume them.
import type {
  IssueRecord,
  LabelRecord,
  MemberRecord,
  MilestoneRecord,
  OrganizationRecord,
  ReleaseRecord,
  RepositoryRecord,
} from './github.records.ts';
import type { Versions } from './github.versions.ts';

/** A repository-scoped object and the repository (`owner/name`) it belongs to. */
export interface Pending {
  api: unknown;
  source: string;
  repository: string;
}

/**
 * An issue as read, waiting for its repository: mapped at once (with repository 0) instead of keeping
 * the whole API object (a few KB each, most of the import's memory at a million issues). A mapping
 * error is kept and thrown when the issue is resolved, as it was when issues were mapped then: an
 * issue of a repository absent from the source is skipped, whatever its fields.
 */
export interface PendingIssue {
  repository: string;
  /** `issue 123` (describe), for the list of skipped records. */
  description: string;
  fields: number;
  record?: IssueRecord;
  /** Names of embedded labels without an id, matched by name once labels are known. */
  idLessLabels?: string[];
  error?: unknown;
}

/**
 * A label as read, mapped at once (with repository 0). The same label comes embedded in every issue that
 * has it: copies with the same id and repository are kept once, the one with the most fields (the first
 * on a tie), where it was first met, as github.versions.ts would choose among them. A copy that does not
 * map keeps its own place and its error, thrown if its repository is known.
 */
export interface PendingLabel {
  repository: string;
  description: string;
  fields: number;
  record?: LabelRecord;
  error?: unknown;
}

/** A milestone or release as read by the dataset import: mapped at once (with repository 0), or its mapping error. */
export type ScopedKind = 'milestones' | 'releases';
export interface PendingScoped {
  repository: string;
  description: string;
  fields: number;
  record?: MilestoneRecord | ReleaseRecord;
  error?: unknown;
}

/** The labels a response says an issue has, replacing those embedded in older copies of the issue. */
export interface IssueLabels {
  repository: string;
  number: number;
  labels: Pending[];
}

export interface Membership {
  organization: { login: string } | { githubId: number };
  memberGithubId: number;
}

/** The accounts and repositories, one version of each (github.versions.ts), as the collector keeps them. */
export type AccountKind = 'organizations' | 'members' | 'repositories';
export interface AccountRecords {
  organizations: OrganizationRecord;
  members: MemberRecord;
  repositories: RepositoryRecord;
}

/**
 * Where the dataset import sends what it reads instead of keeping it (import/github/*.stage.ts): issues, labels,
 * accounts and repositories go to the database as they are read.
 */
export interface CollectSink {
  issue(issue: PendingIssue): void;
  label(label: PendingLabel): void;
  scoped(kind: ScopedKind, pending: PendingScoped): void;
  account<K extends AccountKind>(kind: K, record: AccountRecords[K], fields: number): void;
}

/** What the resolver reads from a collector. */
export interface Collected {
  organizations: Versions<OrganizationRecord>;
  members: Versions<MemberRecord>;
  repositories: Versions<RepositoryRecord>;
  pending: { issues: PendingIssue[]; labels: PendingLabel[]; milestones: Pending[]; releases: Pending[] };
  issueLabels: IssueLabels[];
  memberships: Membership[];
}
