// GET /calendar/events.ics: the OWASP events as an iCalendar feed to subscribe to (issue 28, item 4). Keyless like
// the map's data, for the same reason: a calendar application cannot send X-API-Key. It holds the events not ended
// yet and those that ended within the past year, takes no parameters, and is one document per data version and UTC
// day, built once and served from memory with an ETag (daily-document.ts). The keyed API gives any other selection:
// `/api/v0/events/?format=ics` with the list's filters.
import type { FastifyInstance } from 'fastify';
import { CALENDAR_CONTENT_TYPE, calendarText } from '../api/v0/events/events.calendar.ts';
import { listCalendarEvents } from '../api/v0/events/events.queries.ts';
import { dailyDocument, sendDailyDocument } from './daily-document.ts';
import { CALENDAR_TYPE } from '../http/negotiate.ts';

export const CALENDAR_PATH = '/calendar/events.ics';

export function calendarRoutes(app: FastifyInstance): void {
  const document = dailyDocument(app, async (db) =>
    calendarText(await listCalendarEvents(db), {
      name: 'OWASP events',
      description:
        'OWASP conferences, AppSec Days and partner events: the coming ones and those of the past year, from the OWASP community data service.',
      refresh: 'PT12H',
    }),
  );
  app.get(CALENDAR_PATH, { schema: { hide: true }, config: { offers: [CALENDAR_TYPE] } }, (request, reply) =>
    sendDailyDocument(request, reply, document, CALENDAR_CONTENT_TYPE, {
      'content-disposition': 'inline; filename="owasp-events.ics"',
    }),
  );
}
