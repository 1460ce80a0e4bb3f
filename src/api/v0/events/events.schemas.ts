import { Type } from '@sinclair/typebox';
import type { EventCategory } from '../../../db/schema.ts';
import { BooleanFilter, DateOnly, Latitude, Longitude, Nullable } from '../common/schemas.ts';

const fields = {
  key: Type.String({ description: 'Event key (a slug).' }),
  name: Type.String(),
  start_date: DateOnly(),
  end_date: Nullable(DateOnly('Null when the record has no end date.')),
  latitude: Nullable(Type.Number({ description: 'Null when the location could not be placed.' })),
  longitude: Nullable(Type.Number({ description: 'Null when the location could not be placed.' })),
  url: Type.String({ description: 'Event information or registration address.' }),
};

export const EventItem = Type.Object(fields, { title: 'EventListItem' });

export const EventDetail = Type.Object(
  {
    key: fields.key,
    name: fields.name,
    description: Type.String(),
    start_date: fields.start_date,
    end_date: fields.end_date,
    latitude: fields.latitude,
    longitude: fields.longitude,
    url: fields.url,
  },
  { title: 'Event' },
);

export const EVENT_CATEGORIES: readonly EventCategory[] = ['appsec_days', 'global', 'other', 'partner'];
const Category = Type.Unsafe<EventCategory>(
  Type.String({ enum: [...EVENT_CATEGORIES], description: 'Event category.' }),
);

export const EventFilters = Type.Object({
  category: Type.Optional(
    Type.Array(Category, {
      maxItems: 20,
      description:
        'Event category, case-insensitive; repeat the parameter for several (`category=global&category=partner`: either).',
    }),
  ),
  is_upcoming: BooleanFilter(
    'true: only events whose end date (or start date, without an end date) is today (UTC) or later; ' +
      'it also changes the default ordering to `start_date,end_date`. false or absent: all events.',
  ),
  latitude_gte: Latitude('Minimum latitude.'),
  latitude_lte: Latitude('Maximum latitude.'),
  longitude_gte: Longitude('Minimum longitude.'),
  longitude_lte: Longitude('Maximum longitude.'),
});

export const EventParams = Type.Object({
  event_id: Type.String({ maxLength: 200, description: 'The event key, case-insensitive.' }),
});

/** What the dump carries besides the detail (common/dumps.ts): the `category` filter and group_by read it. */
export const EventStored = Type.Object({ category: Type.String() });
