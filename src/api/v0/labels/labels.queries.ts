import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { repositoryGroups } from '../repositories/repositories.queries.ts';
import { columnsOf } from '../common/schemas.ts';
import { LabelItem, type LabelFilters } from './labels.schemas.ts';

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const LABEL_ORDERING: OrderingSpec = {
  fields: { nest_created_at: 'labels.nest_created_at', nest_updated_at: 'labels.nest_updated_at' },
  default: '-nest_created_at',
  tieBreaker: 'labels.id',
};

/** `group_by`: the fields of the list's facets (groups.ts). */
export const LABEL_GROUPS: GroupFields = repositoryGroups('labels');

export function listLabels(db: Db, query: Static<typeof LabelFilters>) {
  let q = db.selectFrom('labels').select(columnsOf('labels', LabelItem));
  // Colors are stored lower-case (a CHECK guarantees it), so the plain index on color applies.
  if (query.color !== undefined) q = q.where('labels.color', '=', query.color.toLowerCase());
  return q;
}
