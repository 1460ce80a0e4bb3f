import type { FastifyInstance } from 'fastify';
import { listRoute } from '../common/routes.ts';
import { DeletedFilters, DeletedItem } from './deleted.schemas.ts';
import { DELETED_ORDERING, listDeleted } from './deleted.queries.ts';

export async function deletedRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/deleted/',
    operationId: 'list_deleted',
    summary: 'List records that left their lists',
    description:
      'Tombstones for incremental consumers: chapters, committees and projects made inactive (chapters also when they lose ' +
      'their coordinates), members and organizations unpublished, and any record deleted. A record that comes back into its ' +
      'list loses its tombstone. Read with `deleted_after` (the greatest `deleted_at` seen) beside the lists read with ' +
      '`updated_after`; see docs/incremental.md.',
    filters: DeletedFilters,
    item: DeletedItem,
    itemName: 'Deleted',
    ordering: DELETED_ORDERING,
    changes: { name: 'deleted', column: 'tombstones.deleted_at' },
    query: listDeleted,
  });
}
