import { resource } from '../common/resource.ts';
import { keyedDump } from '../common/dumps.ts';
import { SponsorDetail, SponsorFilters, SponsorItem, SponsorParams } from './sponsors.schemas.ts';
import { SPONSOR_GROUPS, SPONSOR_ORDERING, getSponsor, listSponsors, exampleSponsor } from './sponsors.queries.ts';

export const sponsors = resource('sponsors', 'Sponsor', {
  list: {
    filters: SponsorFilters,
    item: SponsorItem,
    ordering: SPONSOR_ORDERING,
    groups: SPONSOR_GROUPS,
    query: listSponsors,
  },
  detail: {
    example: exampleSponsor,
    params: SponsorParams,
    response: SponsorDetail,
    fetch: (db, params) => getSponsor(db, params.sponsor_id),
  },
  dumps: [keyedDump('sponsors', SponsorDetail, 'sponsor_id', (db) => listSponsors(db, {}))],
});
