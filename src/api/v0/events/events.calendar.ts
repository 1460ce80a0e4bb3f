// Events as iCalendar (RFC 5545; issue 28, item 4): a page of the events list with `format=ics` or
// `Accept: text/calendar` (keyed, the list's filters and pages), and the keyless feed /calendar/events.ics
// (web/calendar.data.ts). Each event is an all-day VEVENT: DTSTART;VALUE=DATE its first day, DTEND the day after its
// last (DTEND is exclusive), a UID that never changes (a name-based UUID of the event's key, RFC 7986 §5.3), DTSTAMP
// the record's last change, so the text changes only when the data does (and the feed's ETag with it).
import crypto from 'node:crypto';
import type { Db } from '../../../db/index.ts';
import type { EventCategory } from '../../../db/schema.ts';
import { VERSION } from '../../../version.ts';
import { calendarEventsByKey } from './events.queries.ts';

export { CALENDAR_CONTENT_TYPE } from '../common/formats.ts';

export interface CalendarEvent {
  key: string;
  name: string;
  description: string;
  category: EventCategory;
  start_date: string;
  end_date: string | null;
  url: string;
  suggested_location: string;
  latitude: number | null;
  longitude: number | null;
  updated_at: Date | string;
}

const CATEGORY_LABELS: Record<EventCategory, string> = {
  global: 'Global',
  appsec_days: 'AppSec Days',
  partner: 'Partner',
  other: 'Other',
};

/** A name-based (version 5, SHA-1) UUID of `name` in `namespace` (RFC 9562 §5.5): the same name, the same UUID. */
function uuidV5(namespace: string, name: string): string {
  const hash = crypto
    .createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// RFC 9562's namespace of URLs, then ours: the OWASP events page. Fixed, so every deployment gives an event one UID.
const EVENTS_NAMESPACE = uuidV5('6ba7b811-9dad-11d1-80b4-00c04fd430c8', 'https://owasp.org/events/');

/** The event's UID: its key in any case (keys are case-insensitive), as a UUID. */
export const eventUid = (key: string): string => uuidV5(EVENTS_NAMESPACE, key.toLowerCase());

/** TEXT (RFC 5545 §3.3.11): backslash, semicolon, comma and line breaks escaped; other control characters dropped. */
function text(value: string): string {
  return value
    .replace(/\r\n?/g, '\n')
    .replace(/(?![\t\n])\p{Cc}/gu, '')
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n');
}

/** Content lines are folded at 75 octets (§3.1): CRLF and a space, never inside a UTF-8 sequence. */
function fold(line: string): string {
  if (Buffer.byteLength(line) <= 75) return line;
  const parts: string[] = [];
  let current = '';
  let size = 0;
  // The first line holds 75 octets, the next ones 74 after their leading space.
  let limit = 75;
  for (const char of line) {
    const octets = Buffer.byteLength(char);
    if (size + octets > limit) {
      parts.push(current);
      current = '';
      size = 0;
      limit = 74;
    }
    current += char;
    size += octets;
  }
  parts.push(current);
  return parts.join('\r\n ');
}

const DAY_MS = 86_400_000;
const date = (day: string) => day.replace(/-/g, '');
const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
const stamp = (at: Date | string) =>
  new Date(at)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
/** FLOAT (§3.3.7) allows no exponent: at most six decimals (about 0.1 m). */
const float = (value: number) =>
  value
    .toFixed(6)
    .replace(/\.?0+$/, '')
    .replace(/^-0$/, '0');

/** An http(s) address as a URI value, or undefined when the record's text is none. */
function uri(value: string): string | undefined {
  try {
    const url = new URL(value.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function vevent(event: CalendarEvent): string[] {
  const link = uri(event.url);
  const description = [event.description.trim(), link ?? ''].filter(Boolean).join('\n\n');
  const location = event.suggested_location.trim();
  const placed = event.latitude !== null && event.longitude !== null;
  return [
    'BEGIN:VEVENT',
    `UID:${eventUid(event.key)}`,
    `DTSTAMP:${stamp(event.updated_at)}`,
    `DTSTART;VALUE=DATE:${date(event.start_date)}`,
    `DTEND;VALUE=DATE:${date(dayAfter(event.end_date ?? event.start_date))}`,
    `SUMMARY:${text(event.name)}`,
    ...(link ? [`URL:${link}`] : []),
    ...(description ? [`DESCRIPTION:${text(description)}`] : []),
    ...(location ? [`LOCATION:${text(location)}`] : []),
    ...(placed ? [`GEO:${float(event.latitude!)};${float(event.longitude!)}`] : []),
    `CATEGORIES:${text(CATEGORY_LABELS[event.category] ?? event.category)}`,
    // A conference in a subscribed calendar does not make its reader busy.
    'TRANSP:TRANSPARENT',
    'END:VEVENT',
  ];
}

export interface CalendarOptions {
  /** The calendar's name (NAME, RFC 7986, and X-WR-CALNAME, which most applications read). */
  name: string;
  description: string;
  /** How often a subscribed application should read it again (REFRESH-INTERVAL, X-PUBLISHED-TTL), for a feed. */
  refresh?: string;
}

/** The VCALENDAR of these events, in their order. */
export function calendarText(events: readonly CalendarEvent[], options: CalendarOptions): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:-//OWASP community data service//Events ${text(VERSION)}//EN`,
    'CALSCALE:GREGORIAN',
    `NAME:${text(options.name)}`,
    `X-WR-CALNAME:${text(options.name)}`,
    `DESCRIPTION:${text(options.description)}`,
    `X-WR-CALDESC:${text(options.description)}`,
    ...(options.refresh
      ? [`REFRESH-INTERVAL;VALUE=DURATION:${options.refresh}`, `X-PUBLISHED-TTL:${options.refresh}`]
      : []),
    ...events.flatMap(vevent),
    'END:VCALENDAR',
  ];
  return `${lines.map(fold).join('\r\n')}\r\n`;
}

/** The calendar of a page of the events list (its items in order; `format=ics`). */
export async function calendarOfPage(db: Db, items: readonly Record<string, unknown>[]): Promise<string> {
  const events = await calendarEventsByKey(
    db,
    items.map((item) => String(item.key)),
  );
  return calendarText(events, {
    name: 'OWASP events',
    description: 'OWASP events: a page of the events list of the OWASP community data API.',
  });
}
