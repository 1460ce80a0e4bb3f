import type { FastifyInstance } from 'fastify';
import type { TObject } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { NotFoundError } from '../../../errors.ts';
import type { OrderTerm } from '../common/ordering.ts';
import type { ListPage, PageResult } from '../common/pagination.ts';
import { detailRoute, listRoute } from '../common/routes.ts';
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
  listSnapshotChapters,
  listSnapshotIssues,
  listSnapshotMembers,
  listSnapshotProjects,
  listSnapshotReleases,
  listSnapshots,
  type Period,
} from './snapshots.queries.ts';

const TAG = 'Community';

type PeriodList = (db: Db, period: Period, order: OrderTerm[], page: ListPage) => Promise<PageResult>;

interface SubList {
  segment: string;
  item: TObject;
  itemName: string;
  table: string;
  /** Orderings besides created_at, and the default. */
  other: string;
  default: string;
  list: PeriodList;
}

// The reference's five sub-lists: path segment, item, orderings and default ordering as its client has them.
const SUB_LISTS: SubList[] = [
  { segment: 'chapters', item: SnapshotChapterItem, itemName: 'Chapter', table: 'chapters', other: 'updated_at', default: '-created_at', list: listSnapshotChapters },
  { segment: 'issues', item: SnapshotIssueItem, itemName: 'SnapshotIssue', table: 'issues', other: 'updated_at', default: '-created_at', list: listSnapshotIssues },
  { segment: 'members', item: SnapshotMemberItem, itemName: 'Member', table: 'members', other: 'updated_at', default: '-created_at', list: listSnapshotMembers },
  { segment: 'projects', item: SnapshotProjectItem, itemName: 'Project', table: 'projects', other: 'updated_at', default: '-created_at', list: listSnapshotProjects },
  { segment: 'releases', item: SnapshotReleaseItem, itemName: 'SnapshotRelease', table: 'releases', other: 'published_at', default: '-published_at', list: listSnapshotReleases },
];

export async function snapshotRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/snapshots/',
    operationId: 'list_snapshots',
    summary: 'List snapshots',
    description:
      'One snapshot per completed calendar month (UTC) in which at least one chapter, project, issue, release or member ' +
      'was first created; rebuilt from the stored records after every import and sync.',
    tag: TAG,
    filters: NoFilters,
    item: SnapshotItem,
    itemName: 'Snapshot',
    ordering: {
      fields: { created_at: 'snapshots.created_at', updated_at: 'snapshots.updated_at', start_at: 'snapshots.start_at' },
      default: '-created_at',
      tieBreaker: 'snapshots.id',
    },
    fetch: listSnapshots,
  });

  detailRoute(app, {
    path: '/snapshots/:snapshot_id',
    operationId: 'get_snapshot',
    summary: 'Get snapshot',
    description: 'The period and the number of records of each kind first created in it.',
    tag: TAG,
    params: SnapshotParams,
    response: SnapshotDetail,
    resource: 'Snapshot',
    fetch: (db, params) => getSnapshot(db, params.snapshot_id),
    present: ({ id: _id, ...snapshot }) => snapshot,
  });

  for (const sub of SUB_LISTS) {
    listRoute(app, {
      path: `/snapshots/:snapshot_id/${sub.segment}/`,
      operationId: `list_snapshot_${sub.segment}`,
      summary: `List new ${sub.segment} in snapshot`,
      description: `The ${sub.segment} first created in the snapshot's period (\`created_at\` between \`start_at\` and \`end_at\`).`,
      tag: TAG,
      params: SnapshotParams,
      filters: NoFilters,
      item: sub.item,
      itemName: sub.itemName,
      ordering: {
        fields: { created_at: `${sub.table}.created_at`, [sub.other]: `${sub.table}.${sub.other}` },
        default: sub.default,
        tieBreaker: `${sub.table}.id`,
        nullable: sub.other === 'published_at' ? ['published_at'] : [],
      },
      fetch: async (db, _query, order, page, params) => {
        const snapshot = await getSnapshot(db, params.snapshot_id);
        if (!snapshot) throw new NotFoundError('Snapshot');
        return sub.list(db, snapshot, order, page);
      },
    });
  }
}
