import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { columnsOf } from '../common/schemas.ts';
import { DeletedItem, type DeletedFilters } from './deleted.schemas.ts';

/** Oldest first by default: a consumer reads the feed from where it stopped. */
export const DELETED_ORDERING: OrderingSpec = {
  fields: { deleted_at: 'tombstones.deleted_at' },
  default: 'deleted_at',
  tieBreaker: 'tombstones.id',
};

/** The tombstones (migration 0010): one per record that left its list and has not come back. */
/** `group_by`: the fields of the list's facets (groups.ts). */
export const DELETED_GROUPS: GroupFields = { resource: { value: 'tombstones.resource' } };

export function listDeleted(db: Db, query: Static<typeof DeletedFilters>) {
  let q = db.selectFrom('tombstones').select(columnsOf('tombstones', DeletedItem));
  if (query.resource !== undefined) q = q.where('tombstones.resource', '=', query.resource);
  return q;
}
