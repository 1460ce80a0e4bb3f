import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type ListPage } from '../common/pagination.ts';
import type { LabelFilters } from './labels.schemas.ts';

export function listLabels(db: Db, query: Static<typeof LabelFilters>, order: OrderTerm[], page: ListPage) {
  let q = db.selectFrom('labels').select(['labels.name', 'labels.description', 'labels.color']);
  // Colors are stored lower-case (a CHECK guarantees it), so the plain index on color applies.
  if (query.color !== undefined) q = q.where('labels.color', '=', query.color.toLowerCase());
  return fetchPage(db, q, order, page);
}
