import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { columnsOf } from '../common/schemas.ts';
import { MemberDetail, MemberItem, type MemberFilters } from './members.schemas.ts';

// A member is published once the GitHub sync has its profile: GitHub's dates come with it.
function publishedMembers(db: Db) {
  return db
    .selectFrom('members')
    .where('members.created_at', 'is not', null)
    .where('members.updated_at', 'is not', null);
}

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const MEMBER_ORDERING: OrderingSpec = {
  fields: {
    created_at: 'members.created_at',
    updated_at: 'members.updated_at',
    login: 'members.login',
    name: 'members.name',
  },
  default: '-created_at',
  tieBreaker: 'members.id',
};

/** `group_by`: the fields of the list's facets (groups.ts). */
export const MEMBER_GROUPS: GroupFields = { company: 'members.company', location: 'members.location' };

export function listMembers(db: Db, query: Static<typeof MemberFilters>) {
  let q = publishedMembers(db).select(columnsOf('members', MemberItem));
  if (query.company !== undefined) q = q.where(sql`lower(members.company)`, '=', query.company.toLowerCase());
  if (query.location !== undefined) q = q.where(sql`lower(members.location)`, '=', query.location.toLowerCase());
  return q;
}

export function getMember(db: Db, login: string) {
  return publishedMembers(db)
    .select(columnsOf('members', MemberDetail))
    .where(sql`lower(members.login)`, '=', login.toLowerCase())
    .$narrowType<{ created_at: Date; updated_at: Date }>()
    .executeTakeFirst();
}

/** The path parameters of one published record (its GitHub profile, and so its dates, known) the detail serves (the conformance test requests it). */
export async function exampleMember(db: Db) {
  const value = await firstOf(db, 'members', 'login', { present: ['created_at', 'updated_at'] });
  return value === undefined ? undefined : { member_id: value };
}
