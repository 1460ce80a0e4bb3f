import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { SponsorDetail, SponsorFilters, SponsorItem, SponsorParams } from './sponsors.schemas.ts';
import { getSponsor, listSponsors } from './sponsors.queries.ts';

export async function sponsorRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/sponsors/',
    operationId: 'list_sponsors',
    summary: 'List sponsors',
    tag: 'Community',
    filters: SponsorFilters,
    item: SponsorItem,
    itemName: 'Sponsor',
    // sponsors_name_idx is (name, id): the public name, not sort_name, is what the interface orders by.
    ordering: { fields: { name: 'name' }, default: 'name', tieBreaker: 'id' },
    fetch: listSponsors,
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
