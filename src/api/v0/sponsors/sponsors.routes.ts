import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { SponsorDetail, SponsorFilters, SponsorItem, SponsorParams } from './sponsors.schemas.ts';
import { SPONSOR_ORDERING, getSponsor, listSponsors } from './sponsors.queries.ts';

export async function sponsorRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/sponsors/',
    operationId: 'list_sponsors',
    summary: 'List sponsors',
    tag: 'Community',
    filters: SponsorFilters,
    item: SponsorItem,
    itemName: 'Sponsor',
    ordering: SPONSOR_ORDERING,
    query: listSponsors,
  });

  detailRoute(app, {
    path: '/sponsors/:sponsor_id',
    operationId: 'get_sponsor',
    summary: 'Get sponsor',
    tag: 'Community',
    params: SponsorParams,
    response: SponsorDetail,
    resource: 'Sponsor',
    fetch: (db, params) => getSponsor(db, params.sponsor_id),
    present: (sponsor) => sponsor,
  });
}
