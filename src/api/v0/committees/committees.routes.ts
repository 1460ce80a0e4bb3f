import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { CommitteeDetail, CommitteeFilters, CommitteeItem, CommitteeParams } from './committees.schemas.ts';
import { COMMITTEE_ORDERING, getCommittee, listCommittees } from './committees.queries.ts';

export async function committeeRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/committees/',
    operationId: 'list_committees',
    summary: 'List committees',
    description: 'Active committees.',
    tag: 'Community',
    filters: CommitteeFilters,
    item: CommitteeItem,
    itemName: 'Committee',
    ordering: COMMITTEE_ORDERING,
    query: listCommittees,
  });

  detailRoute(app, {
    path: '/committees/:committee_id',
    operationId: 'get_committee',
    summary: 'Get committee',
    tag: 'Community',
    params: CommitteeParams,
    response: CommitteeDetail,
    resource: 'Committee',
    fetch: (db, params) => getCommittee(db, params.committee_id),
    present: (committee) => committee,
  });
}
