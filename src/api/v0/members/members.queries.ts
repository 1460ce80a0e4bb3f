import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { MemberFilters } from './members.schemas.ts';

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

export function listMembers(db: Db, query: Static<typeof MemberFilters>) {
  let q = publishedMembers(db).select([
    'members.login',
    'members.name',
    'members.avatar_url',
    'members.url',
    'members.created_at',
    'members.updated_at',
  ]);
  if (query.company !== undefined) q = q.where(sql`lower(members.company)`, '=', query.company.toLowerCase());
  if (query.location !== undefined) q = q.where(sql`lower(members.location)`, '=', query.location.toLowerCase());
  return q;
}

export function getMember(db: Db, login: string) {
  return publishedMembers(db)
    .select([
      'members.login',
      'members.name',
      'members.avatar_url',
      'members.url',
      'members.bio',
      'members.company',
      'members.location',
      'members.title',
      'members.twitter_username',
      'members.followers_count',
      'members.following_count',
      'members.public_repositories_count',
      'members.created_at',
      'members.updated_at',
    ])
    .where(sql`lower(members.login)`, '=', login.toLowerCase())
    .$narrowType<{ created_at: Date; updated_at: Date }>()
    .executeTakeFirst();
}
