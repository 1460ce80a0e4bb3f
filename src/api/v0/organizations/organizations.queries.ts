import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { columnsOf } from '../common/schemas.ts';
import { OrganizationDetail, OrganizationItem, type OrganizationFilters } from './organizations.schemas.ts';

// Published once the GitHub sync has the organization's profile: GitHub's dates come with it.
function publishedOrganizations(db: Db) {
  return db
    .selectFrom('organizations')
    .where('organizations.created_at', 'is not', null)
    .where('organizations.updated_at', 'is not', null);
}

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const ORGANIZATION_ORDERING: OrderingSpec = {
  fields: { created_at: 'organizations.created_at', updated_at: 'organizations.updated_at' },
  default: '-created_at',
  tieBreaker: 'organizations.id',
};

// The stored e-mail address is never selected: the schemas, which name the columns, do not have it.
/** `group_by`: the fields of the list's facets (groups.ts). */
export const ORGANIZATION_GROUPS: GroupFields = {
  company: 'organizations.company',
  location: 'organizations.location',
};

export function listOrganizations(db: Db, query: Static<typeof OrganizationFilters>) {
  let q = publishedOrganizations(db).select(columnsOf('organizations', OrganizationItem));
  if (query.location !== undefined) q = q.where(sql`lower(organizations.location)`, '=', query.location.toLowerCase());
  return q;
}

export function getOrganization(db: Db, login: string) {
  return publishedOrganizations(db)
    .select(columnsOf('organizations', OrganizationDetail))
    .where(sql`lower(organizations.login)`, '=', login.toLowerCase())
    .$narrowType<{ created_at: Date; updated_at: Date }>()
    .executeTakeFirst();
}

/** The path parameters of one published record (its GitHub profile, and so its dates, known) the detail serves (the conformance test requests it). */
export async function exampleOrganization(db: Db) {
  const value = await firstOf(db, 'organizations', 'login', { present: ['created_at', 'updated_at'] });
  return value === undefined ? undefined : { organization_id: value };
}
