import type { FastifyInstance } from 'fastify';
import { listRoute } from '../common/routes.ts';
import { LabelFilters, LabelItem } from './labels.schemas.ts';
import { LABEL_ORDERING, listLabels } from './labels.queries.ts';

export async function labelRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/labels/',
    operationId: 'list_labels',
    summary: 'List labels',
    description:
      'Issue labels of the mirrored GitHub repositories. Default ordering `-nest_created_at`: ' +
      'the labels this service stored most recently first (the interface states no default).',
    tag: 'GitHub',
    filters: LabelFilters,
    item: LabelItem,
    itemName: 'Label',
    ordering: LABEL_ORDERING,
    query: listLabels,
  });
}
