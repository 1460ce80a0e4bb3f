import { resource } from '../common/resource.ts';
import { keyedDump } from '../common/dumps.ts';
import { EventDetail, EventFilters, EventItem, EventParams, EventStored } from './events.schemas.ts';
import { calendarOfPage } from './events.calendar.ts';
import { EVENT_GROUPS, EVENT_ORDERING, getEvent, listEvents, exampleEvent } from './events.queries.ts';

export const events = resource('events', 'Event', {
  description: 'All events; with `is_upcoming=true` only those not ended yet, soonest first by default.',
  list: {
    filters: EventFilters,
    item: EventItem,
    ordering: EVENT_ORDERING,
    defaultOrdering: (query) => (query.is_upcoming ? 'start_date,end_date' : '-start_date,-end_date'),
    geo: { latitude: 'events.latitude', longitude: 'events.longitude', earth: 'events.earth' },
    groups: EVENT_GROUPS,
    calendar: calendarOfPage,
    query: listEvents,
  },
  detail: {
    example: exampleEvent,
    params: EventParams,
    response: EventDetail,
    fetch: (db, params) => getEvent(db, params.event_id),
  },
  dumps: [{ ...keyedDump('events', EventDetail, 'event_id', (db) => listEvents(db, {})), extra: EventStored }],
});
