import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../common/schemas.ts';
import { ChapterItem } from '../chapters/chapters.schemas.ts';
import { IssueItem } from '../issues/issues.schemas.ts';
import { MemberItem } from '../members/members.schemas.ts';
import { ProjectItem } from '../projects/projects.schemas.ts';
import { ReleaseItem } from '../releases/releases.schemas.ts';

const Period = {
  created_at: DateTime('When the snapshot was first built.'),
  end_at: DateTime('Last instant of the month (UTC), included.'),
  key: Type.String({ description: 'The month, `YYYY-MM`.', examples: ['2025-02'] }),
  start_at: DateTime('First instant of the month (UTC).'),
  title: Type.String({ examples: ['February 2025 Snapshot'] }),
  updated_at: DateTime('When its counts last changed.'),
};

export const SnapshotItem = Type.Object(Period, { title: 'SnapshotListItem' });

const Count = (what: string) => Type.Integer({ minimum: 0, description: `${what} first created in the period.` });

export const SnapshotDetail = Type.Object(
  {
    ...Period,
    new_chapters_count: Count('Active chapters'),
    new_issues_count: Count('Issues'),
    new_projects_count: Count('Active projects'),
    new_releases_count: Count('Releases (neither drafts nor pre-releases)'),
    new_users_count: Count('Members (GitHub accounts)'),
  },
  { title: 'Snapshot' },
);

export const SnapshotParams = Type.Object({
  snapshot_id: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'The snapshot key, `YYYY-MM`.',
    examples: ['2025-02'],
  }),
});

export const NoFilters = Type.Object({});

/** The fields the sub-lists add to issues and releases: their repository's (joined) names. */
export const Repository = {
  organization_login: Nullable(
    Type.String({ description: 'Login of the organization owning the repository; null for a user-owned one.' }),
  ),
  repository_name: Nullable(Type.String()),
};

// The sub-lists give the items of the resource lists, as the reference's client models them; a member in a
// period has dates, as every published member does.
export const SnapshotChapterItem = ChapterItem;

export const SnapshotIssueItem = Type.Object({ ...IssueItem.properties, ...Repository }, { title: 'SnapshotIssue' });

export const SnapshotReleaseItem = Type.Object(
  { ...ReleaseItem.properties, ...Repository },
  { title: 'SnapshotRelease' },
);

export const SnapshotProjectItem = ProjectItem;

export const SnapshotMemberItem = MemberItem;
