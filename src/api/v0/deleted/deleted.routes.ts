import { resource } from '../common/resource.ts';
import { fieldsOf } from '../common/dumps.ts';
import type { ListQuery } from '../common/pagination.ts';
import { DeletedFilters, DeletedItem } from './deleted.schemas.ts';
import { DELETED_GROUPS, DELETED_ORDERING, listDeleted } from './deleted.queries.ts';

export const deleted = resource('deleted', 'Deleted', {
  summary: 'List records that left their lists',
  description:
    'Tombstones for incremental consumers: chapters, committees and projects made inactive (chapters also when they lose ' +
    'their coordinates), members and organizations unpublished, and any record deleted. A record that comes back into its ' +
    'list loses its tombstone. Read with `deleted_after` (the greatest `deleted_at` seen) beside the lists read with ' +
    '`updated_after`; see docs/incremental.md.',
  list: {
    filters: DeletedFilters,
    item: DeletedItem,
    ordering: DELETED_ORDERING,
    groups: DELETED_GROUPS,
    changes: { name: 'deleted', column: 'tombstones.deleted_at' },
    query: listDeleted,
  },
  dumps: [
    {
      // The feed of records that left their lists has no detail either: its list's item (resource, key, deleted_at).
      resource: 'deleted',
      record: DeletedItem,
      params: [],
      key: 'tombstones.id',
      rows: (db) => (listDeleted(db, {}) as ListQuery).clearSelect().select(fieldsOf('tombstones', DeletedItem)),
    },
  ],
});
