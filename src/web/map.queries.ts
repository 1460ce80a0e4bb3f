// The records of the /map page: the active chapters and the upcoming events that have coordinates,
// by the lists' own definitions (chapters.queries.ts: active and placed; events.queries.ts:
// is_upcoming, "today" the UTC date). test/map-browser.test.ts holds the counts to the API's GeoJSON.
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

export function listMapChapters(db: Db) {
  return db
    .selectFrom('chapters')
    .select(['key', 'name', 'latitude', 'longitude', 'created_at', 'updated_at', 'country', 'country_code', 'region'])
    .where('is_active', '=', true)
    .where('latitude', 'is not', null)
    .where('longitude', 'is not', null)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

export function listMapEvents(db: Db) {
  return db
    .selectFrom('events')
    .select(['key', 'name', 'start_date', 'end_date', 'latitude', 'longitude', 'url'])
    .where(sql<boolean>`coalesce(end_date, start_date) >= (now() at time zone 'UTC')::date`)
    .where('latitude', 'is not', null)
    .where('longitude', 'is not', null)
    .orderBy('start_date')
    .orderBy('end_date')
    .orderBy('id')
    .execute();
}
