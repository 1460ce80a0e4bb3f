import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import { NotFoundError } from '../../../errors.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { ListQuery } from '../common/pagination.ts';
import { NEW_RECORDS } from '../../../data/snapshots/monthly-snapshots.queries.ts';
import { aliasesOf, columnsOf } from '../common/schemas.ts';
import { IssueItem } from '../issues/issues.schemas.ts';
import { ReleaseItem } from '../releases/releases.schemas.ts';
import {
  Repository,
  SnapshotChapterItem,
  SnapshotItem,
  SnapshotMemberItem,
  SnapshotProjectItem,
} from './snapshots.schemas.ts';

/** A stored snapshot, by id: its bounds are read in SQL, where they keep their microseconds. */
export interface Period {
  id: string;
}

/** The orderings of the list of snapshots: public name → SQL column (listRoute orders and seeks by them). */
export const SNAPSHOT_ORDERING: OrderingSpec = {
  fields: { created_at: 'snapshots.created_at', updated_at: 'snapshots.updated_at', start_at: 'snapshots.start_at' },
  default: '-created_at',
  tieBreaker: 'snapshots.id',
};

export function listSnapshots(db: Db) {
  return db.selectFrom('snapshots').select(columnsOf('snapshots', SnapshotItem));
}

/** The reference matches the key case-insensitively; ours are digits, so trimming is all it takes. */
export function getSnapshot(db: Db, snapshotId: string) {
  return db
    .selectFrom('snapshots')
    .select([
      'id',
      'created_at',
      'end_at',
      'key',
      'start_at',
      'title',
      'updated_at',
      'new_chapters_count',
      'new_issues_count',
      'new_projects_count',
      'new_releases_count',
      'new_users_count',
    ])
    .where('key', '=', snapshotId.trim().toLowerCase())
    .executeTakeFirst();
}

/** Both ends included, as the reference's `created_at__gte` / `__lte`; end_at is the month's last microsecond. */
const within = (column: string, period: Period) =>
  sql<boolean>`${sql.ref(column)} BETWEEN (SELECT start_at FROM snapshots WHERE id = ${period.id}) AND (SELECT end_at FROM snapshots WHERE id = ${period.id})`;

function listSnapshotChapters(db: Db, period: Period) {
  return db
    .selectFrom('chapters')
    .select(columnsOf('chapters', SnapshotChapterItem))
    .where(within('chapters.created_at', period))
    .where(NEW_RECORDS.chapters.where);
}

function listSnapshotProjects(db: Db, period: Period) {
  return (
    db
      .selectFrom('projects')
      // `group_by=health_bucket` as on the projects list (the projects' current health, docs/health.md).
      .leftJoin('project_health', 'project_health.project_id', 'projects.id')
      .select(columnsOf('projects', SnapshotProjectItem))
      .where(within('projects.created_at', period))
      .where(NEW_RECORDS.projects.where)
  );
}

function listSnapshotMembers(db: Db, period: Period) {
  return db
    .selectFrom('members')
    .select(columnsOf('members', SnapshotMemberItem))
    .where(within('members.created_at', period))
    .where(NEW_RECORDS.users.where);
}

/** Issues and releases name their repository by the organization's login and the repository's name. */
const REPOSITORY_NAMES = aliasesOf(Repository, {
  organization_login: 'organizations.login',
  repository_name: 'repositories.name',
});

function listSnapshotIssues(db: Db, period: Period) {
  return db
    .selectFrom('issues')
    .leftJoin('repositories', 'repositories.id', 'issues.repository_id')
    .leftJoin('organizations', 'organizations.id', 'repositories.organization_id')
    .select([...columnsOf('issues', IssueItem), ...REPOSITORY_NAMES])
    .where(within('issues.created_at', period))
    .where(NEW_RECORDS.issues.where);
}

function listSnapshotReleases(db: Db, period: Period) {
  return db
    .selectFrom('releases')
    .leftJoin('repositories', 'repositories.id', 'releases.repository_id')
    .leftJoin('organizations', 'organizations.id', 'repositories.organization_id')
    .select([...columnsOf('releases', ReleaseItem), ...REPOSITORY_NAMES])
    .where(within('releases.created_at', period))
    .where(NEW_RECORDS.releases.where);
}

export type SnapshotSegment = 'chapters' | 'issues' | 'members' | 'projects' | 'releases';

/** The orderings of a sub-list, as the reference's client has them: created_at and one other column of the table. */
function subOrdering(table: string, other: string, defaultOrdering: string): OrderingSpec {
  return {
    fields: { created_at: `${table}.created_at`, [other]: `${table}.${other}` },
    default: defaultOrdering,
    tieBreaker: `${table}.id`,
    nullable: other === 'published_at' ? ['published_at'] : [],
  };
}

/** The five sub-lists of a snapshot: their orderings and rows; the rows of an unknown snapshot are a NotFoundError. */
export const SNAPSHOT_SUB_LISTS: Record<
  SnapshotSegment,
  { ordering: OrderingSpec; query: (db: Db, snapshotId: string) => Promise<ListQuery> }
> = {
  chapters: { ordering: subOrdering('chapters', 'updated_at', '-created_at'), query: inSnapshot(listSnapshotChapters) },
  issues: { ordering: subOrdering('issues', 'updated_at', '-created_at'), query: inSnapshot(listSnapshotIssues) },
  members: { ordering: subOrdering('members', 'updated_at', '-created_at'), query: inSnapshot(listSnapshotMembers) },
  projects: { ordering: subOrdering('projects', 'updated_at', '-created_at'), query: inSnapshot(listSnapshotProjects) },
  releases: {
    ordering: subOrdering('releases', 'published_at', '-published_at'),
    query: inSnapshot(listSnapshotReleases),
  },
};

function inSnapshot<Q>(list: (db: Db, period: Period) => Q): (db: Db, snapshotId: string) => Promise<Q> {
  return async (db, snapshotId) => {
    const snapshot = await getSnapshot(db, snapshotId);
    if (!snapshot) throw new NotFoundError('Snapshot');
    return list(db, snapshot);
  };
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleSnapshot(db: Db) {
  const value = await firstOf(db, 'snapshots', 'key');
  return value === undefined ? undefined : { snapshot_id: value };
}

/** A snapshot whose sub-list of `segment` has records (the kinds of the data fall in different months). */
export async function exampleSnapshotWith(db: Db, segment: SnapshotSegment) {
  const column = `new_${segment === 'members' ? 'users' : segment}_count` as const;
  const row = await db
    .selectFrom('snapshots')
    .select('key')
    .where(column, '>', 0)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row && { snapshot_id: row.key };
}
