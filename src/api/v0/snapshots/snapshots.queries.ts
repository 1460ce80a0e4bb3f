import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type ListPage } from '../common/pagination.ts';
import { NEW_RECORDS } from '../../../data/snapshots/snapshots.queries.ts';

/** A stored snapshot, by id: its bounds are read in SQL, where they keep their microseconds. */
export interface Period {
  id: string;
}

export function listSnapshots(db: Db, _query: unknown, order: OrderTerm[], page: ListPage) {
  const q = db.selectFrom('snapshots').select(['created_at', 'end_at', 'key', 'start_at', 'title', 'updated_at']);
  return fetchPage(db, q, order, page);
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

export function listSnapshotChapters(db: Db, period: Period, order: OrderTerm[], page: ListPage) {
  const q = db
    .selectFrom('chapters')
    .select(['key', 'name', 'latitude', 'longitude', 'created_at', 'updated_at'])
    .where(within('chapters.created_at', period))
    .where(NEW_RECORDS.chapters.where);
  return fetchPage(db, q, order, page);
}

export function listSnapshotProjects(db: Db, period: Period, order: OrderTerm[], page: ListPage) {
  const q = db
    .selectFrom('projects')
    .select(['key', 'name', 'level', 'type', 'created_at', 'updated_at'])
    .where(within('projects.created_at', period))
    .where(NEW_RECORDS.projects.where);
  return fetchPage(db, q, order, page);
}

export function listSnapshotMembers(db: Db, period: Period, order: OrderTerm[], page: ListPage) {
  const q = db
    .selectFrom('members')
    .select(['login', 'name', 'avatar_url', 'url', 'created_at', 'updated_at'])
    .where(within('members.created_at', period))
    .where(NEW_RECORDS.users.where);
  return fetchPage(db, q, order, page);
}

export function listSnapshotIssues(db: Db, period: Period, order: OrderTerm[], page: ListPage) {
  const q = db
    .selectFrom('issues')
    .leftJoin('repositories', 'repositories.id', 'issues.repository_id')
    .leftJoin('organizations', 'organizations.id', 'repositories.organization_id')
    .select([
      'issues.title',
      'issues.state',
      'issues.url',
      'issues.created_at',
      'issues.updated_at',
      'organizations.login as organization_login',
      'repositories.name as repository_name',
    ])
    .where(within('issues.created_at', period))
    .where(NEW_RECORDS.issues.where);
  return fetchPage(db, q, order, page);
}

export function listSnapshotReleases(db: Db, period: Period, order: OrderTerm[], page: ListPage) {
  const q = db
    .selectFrom('releases')
    .leftJoin('repositories', 'repositories.id', 'releases.repository_id')
    .leftJoin('organizations', 'organizations.id', 'repositories.organization_id')
    .select([
      'releases.name',
      'releases.tag_name',
      'releases.published_at',
      'releases.created_at',
      'organizations.login as organization_login',
      'repositories.name as repository_name',
    ])
    .where(within('releases.created_at', period))
    .where(NEW_RECORDS.releases.where);
  return fetchPage(db, q, order, page);
}
