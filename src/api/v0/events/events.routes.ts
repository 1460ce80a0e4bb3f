import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { EventDetail, EventFilters, EventItem, EventParams } from './events.schemas.ts';
import { EVENT_ORDERING, getEvent, listEvents } from './events.queries.ts';

export async function eventRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/events/',
    operationId: 'list_events',
    summary: 'List events',
    description: 'All events; with `is_upcoming=true` only those not ended yet, soonest first by default.',
    tag: 'Community',
    filters: EventFilters,
    item: EventItem,
    itemName: 'Event',
    ordering: EVENT_ORDERING,
    defaultOrdering: (query) => (query.is_upcoming ? 'start_date,end_date' : '-start_date,-end_date'),
    geo: { latitude: 'events.latitude', longitude: 'events.longitude' },
    query: listEvents,
  });

  detailRoute(app, {
    path: '/events/:event_id',
    operationId: 'get_event',
    summary: 'Get event',
    tag: 'Community',
    params: EventParams,
    response: EventDetail,
    resource: 'Event',
    fetch: (db, params) => getEvent(db, params.event_id),
    present: (event) => event,
  });
}
