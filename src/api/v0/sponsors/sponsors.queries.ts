import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { columnsOf } from '../common/schemas.ts';
import { SponsorDetail, SponsorItem, type SponsorFilters } from './sponsors.schemas.ts';

/**
 * The orderings of the list: public name → SQL column (listRoute orders and seeks by them).
 * sponsors_name_idx is (name, id): the public name, not sort_name, is what the interface orders by.
 */
export const SPONSOR_ORDERING: OrderingSpec = { fields: { name: 'name' }, default: 'name', tieBreaker: 'id' };

/** `group_by`: the fields of the list's facets (groups.ts). */
export const SPONSOR_GROUPS: GroupFields = {
  sponsor_type: 'sponsors.sponsor_type',
  member_type: 'sponsors.member_type',
  is_member: { value: 'sponsors.is_member' },
};

export function listSponsors(db: Db, query: Static<typeof SponsorFilters>) {
  let q = db.selectFrom('sponsors').select(columnsOf('sponsors', SponsorItem));
  if (query.is_member !== undefined) q = q.where('is_member', '=', query.is_member);
  if (query.member_type !== undefined) q = q.where(sql`lower(member_type)`, '=', query.member_type.toLowerCase());
  if (query.sponsor_type !== undefined) q = q.where(sql`lower(sponsor_type)`, '=', query.sponsor_type.toLowerCase());
  return q;
}

export function getSponsor(db: Db, sponsorId: string) {
  return db
    .selectFrom('sponsors')
    .select(columnsOf('sponsors', SponsorDetail))
    .where(sql`lower(key)`, '=', sponsorId.toLowerCase())
    .executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleSponsor(db: Db) {
  const value = await firstOf(db, 'sponsors', 'key');
  return value === undefined ? undefined : { sponsor_id: value };
}
