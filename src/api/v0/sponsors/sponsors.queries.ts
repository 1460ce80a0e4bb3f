import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type ListPage } from '../common/pagination.ts';
import type { SponsorFilters } from './sponsors.schemas.ts';

export function listSponsors(db: Db, query: Static<typeof SponsorFilters>, order: OrderTerm[], page: ListPage) {
  let q = db.selectFrom('sponsors').select(['key', 'name', 'sponsor_type', 'is_member', 'member_type', 'url', 'image_url']);
  if (query.is_member !== undefined) q = q.where('is_member', '=', query.is_member);
  if (query.member_type !== undefined) q = q.where(sql`lower(member_type)`, '=', query.member_type.toLowerCase());
  if (query.sponsor_type !== undefined) q = q.where(sql`lower(sponsor_type)`, '=', query.sponsor_type.toLowerCase());
  return fetchPage(db, q, order, page);
}

export function getSponsor(db: Db, sponsorId: string) {
  return db
    .selectFrom('sponsors')
    .select(['key', 'name', 'sponsor_type', 'description', 'url', 'image_url', 'job_url', 'is_member', 'member_type'])
    .where(sql`lower(key)`, '=', sponsorId.toLowerCase())
    .executeTakeFirst();
}
