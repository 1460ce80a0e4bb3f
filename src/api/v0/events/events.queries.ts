import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { columnsOf } from '../common/schemas.ts';
import { EventDetail, EventItem, type EventFilters } from './events.schemas.ts';

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
  let q = db.selectFrom('events').select(columnsOf('events', EventItem));
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
    .select(columnsOf('events', EventDetail))
    .where(sql`lower(key)`, '=', eventId.toLowerCase())
    .executeTakeFirst();
}

const CALENDAR_COLUMNS = [
  'key',
  'name',
  'description',
  'category',
  'start_date',
  'end_date',
  'url',
  'suggested_location',
  'latitude',
  'longitude',
  'updated_at',
] as const;

/** What the calendar says of the events of a page (events.calendar.ts), in the order of `keys`. */
export async function calendarEventsByKey(db: Db, keys: readonly string[]) {
  if (keys.length === 0) return [];
  const rows = await db
    .selectFrom('events')
    .select(CALENDAR_COLUMNS)
    .where(
      sql`lower(key)`,
      'in',
      keys.map((key) => key.toLowerCase()),
    )
    .execute();
  const byKey = new Map(rows.map((row) => [row.key, row]));
  return keys.flatMap((key) => byKey.get(key) ?? []);
}

/**
 * The events of the keyless calendar feed: those not ended yet and those that ended within the past year (UTC
 * dates, as `is_upcoming`), placed or not, soonest first.
 */
export function listCalendarEvents(db: Db) {
  return db
    .selectFrom('events')
    .select(CALENDAR_COLUMNS)
    .where(sql<boolean>`coalesce(end_date, start_date) >= ((now() at time zone 'UTC')::date - interval '1 year')::date`)
    .orderBy('start_date')
    .orderBy('end_date')
    .orderBy('id')
    .execute();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleEvent(db: Db) {
  const value = await firstOf(db, 'events', 'key');
  return value === undefined ? undefined : { event_id: value };
}
