import type { TObject } from '@sinclair/typebox';
import { sql } from 'kysely';
import { listOperation, resource, type Resource } from '../common/resource.ts';
import {
  NoFilters,
  SnapshotChapterItem,
  SnapshotDetail,
  SnapshotIssueItem,
  SnapshotItem,
  SnapshotMemberItem,
  SnapshotParams,
  SnapshotProjectItem,
  SnapshotReleaseItem,
} from './snapshots.schemas.ts';
import {
  getSnapshot,
  listSnapshots,
  SNAPSHOT_ORDERING,
  SNAPSHOT_SUB_LISTS,
  type SnapshotSegment,
  exampleSnapshot,
  exampleSnapshotWith,
} from './snapshots.queries.ts';
import { CHAPTER_GROUPS } from '../chapters/chapters.queries.ts';
import { issueRecords } from '../issues/issues.queries.ts';
import { MEMBER_GROUPS } from '../members/members.queries.ts';
import { PROJECT_GROUPS } from '../projects/projects.queries.ts';
import { releaseRecords } from '../releases/releases.queries.ts';
import type { GroupFields } from '../common/groups.ts';
import { fieldsOf, keyedDump, param, REPOSITORY_PARAMS } from '../common/dumps.ts';
import type { ListQuery } from '../common/pagination.ts';
import type { DumpSource } from '../../../dumps/dump-source.ts';
import { NEW_RECORDS } from '../../../data/snapshots/monthly-snapshots.queries.ts';

// The reference's five sub-lists: path segment and item; their orderings and rows are in snapshots.queries.ts.
// `group_by` as on the resource's own list.
const SUB_LISTS: { segment: SnapshotSegment; item: TObject; itemName: string; groups: GroupFields }[] = [
  { segment: 'chapters', item: SnapshotChapterItem, itemName: 'Chapter', groups: CHAPTER_GROUPS },
  { segment: 'issues', item: SnapshotIssueItem, itemName: 'SnapshotIssue', groups: issueRecords.groups },
  { segment: 'members', item: SnapshotMemberItem, itemName: 'Member', groups: MEMBER_GROUPS },
  { segment: 'projects', item: SnapshotProjectItem, itemName: 'Project', groups: PROJECT_GROUPS },
  { segment: 'releases', item: SnapshotReleaseItem, itemName: 'SnapshotRelease', groups: releaseRecords.groups },
];

/**
 * The one sub-list of snapshots that the other dumps cannot give: which releases count (neither drafts nor
 * pre-releases, which no public field shows). The others are the records of their lists by `created_at`.
 */
function snapshotReleasesDump(): DumpSource {
  return {
    resource: 'snapshot-releases',
    record: SnapshotReleaseItem,
    params: ['snapshot_id', 'organization_id', 'repository_id', 'release_id'],
    key: 'releases.id',
    rows: (db) =>
      db
        .selectFrom('releases')
        .innerJoin('repositories', 'repositories.id', 'releases.repository_id')
        .leftJoin('organizations', 'organizations.id', 'repositories.organization_id')
        // A snapshot's period is its month (UTC), start_at to end_at included (snapshots.queries.ts).
        .innerJoin('snapshots', (join) =>
          join.on(sql<boolean>`snapshots.key = to_char(releases.created_at AT TIME ZONE 'UTC', 'YYYY-MM')`),
        )
        .where(NEW_RECORDS.releases.where)
        .select([
          ...fieldsOf('releases', SnapshotReleaseItem, {
            organization_login: sql`organizations.login`,
            repository_name: sql`repositories.name`,
          }),
          param('snapshot_id', 'snapshots.key'),
          ...REPOSITORY_PARAMS,
          param('release_id', 'releases.tag_name'),
        ]) as unknown as ListQuery,
  };
}

const snapshot = resource('snapshots', 'Snapshot', {
  description:
    'One snapshot per completed calendar month (UTC) in which at least one chapter, project, issue, release or member ' +
    'was first created; rebuilt from the stored records after every import and sync.',
  list: { filters: NoFilters, item: SnapshotItem, ordering: SNAPSHOT_ORDERING, query: listSnapshots },
  detail: {
    example: exampleSnapshot,
    description: 'The period and the number of records of each kind first created in it.',
    params: SnapshotParams,
    response: SnapshotDetail,
    fetch: (db, params) => getSnapshot(db, params.snapshot_id),
    present: ({ id: _id, ...rest }) => rest,
  },
  dumps: [keyedDump('snapshots', SnapshotDetail, 'snapshot_id', (db) => listSnapshots(db)), snapshotReleasesDump()],
});

export const snapshots: Resource = {
  ...snapshot,
  operations: [
    ...snapshot.operations,
    ...SUB_LISTS.map((sub) =>
      listOperation(
        {
          path: `/snapshots/:snapshot_id/${sub.segment}/`,
          operationId: `list_snapshot_${sub.segment}`,
          summary: `List new ${sub.segment} in snapshot`,
          description: `The ${sub.segment} first created in the snapshot's period (\`created_at\` between \`start_at\` and \`end_at\`).`,
          params: SnapshotParams,
          filters: NoFilters,
          item: sub.item,
          itemName: sub.itemName,
          ordering: SNAPSHOT_SUB_LISTS[sub.segment].ordering,
          groups: sub.groups,
          query: (db, _filters, params) => SNAPSHOT_SUB_LISTS[sub.segment].query(db, params.snapshot_id),
        },
        (db) => exampleSnapshotWith(db, sub.segment),
      ),
    ),
  ],
};
