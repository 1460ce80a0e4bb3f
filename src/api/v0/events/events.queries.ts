import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import type { EventFilters } from './events.schemas.ts';

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const EVENT_ORDERING: OrderingSpec = {
  fields: { start_date: 'start_date', end_date: 'end_date', latitude: 'latitude', longitude: 'longitude' },
  default: '-start_date,-end_date',
  tieBreaker: 'id',
  nullable: ['end_date', 'latitude', 'longitude'],
};

/** `group_by`: the fields of the list's facets (groups.ts). */
export const EVENT_GROUPS: GroupFields = { category: { value: 'events.category' } };

export function listEvents(db: Db, query: Static<typeof EventFilters>) {
  let q = db.selectFrom('events').select(['key', 'name', 'start_date', 'end_date', 'latitude', 'longitude', 'url']);
  // Written as the expression of events_upcoming_idx; "today" is the UTC date whatever the session time zone.
  if (query.is_upcoming) q = q.where(sql<boolean>`coalesce(end_date, start_date) >= (now() at time zone 'UTC')::date`);
  if (query.category !== undefined) q = q.where('category', 'in', query.category);
  if (query.latitude_gte !== undefined) q = q.where('latitude', '>=', query.latitude_gte);
  if (query.latitude_lte !== undefined) q = q.where('latitude', '<=', query.latitude_lte);
  if (query.longitude_gte !== undefined) q = q.where('longitude', '>=', query.longitude_gte);
  if (query.longitude_lte !== undefined) q = q.where('longitude', '<=', query.longitude_lte);
  return q;
}

export function getEvent(db: Db, eventId: string) {
  return db
    .selectFrom('events')
    .select(['key', 'name', 'description', 'start_date', 'end_date', 'latitude', 'longitude', 'url'])
    .where(sql`lower(key)`, '=', eventId.toLowerCase())
    .executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleEvent(db: Db) {
  const value = await firstOf(db, 'events', 'key');
  return value === undefined ? undefined : { event_id: value };
}
