// The representations of a list (issue 28): JSON (the default), CSV (every list), GeoJSON (lists with `geo`) and
// iCalendar (lists with `calendar`), chosen by `format=` or else by `Accept` (http/negotiate.ts). Here: which ones a
// list offers, its `format` parameter, the 406, and the file name of a CSV or calendar download.
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  CALENDAR_TYPE,
  CSV_TYPE,
  FORMATS,
  GEOJSON_TYPE,
  JSON_TYPE,
  requestMediaType,
  type Format,
} from '../../../http/negotiate.ts';
import { NotAcceptableError } from '../../../errors.ts';

/** The formats of a list, the default first; also the order in which a tie of `Accept` qualities is decided. */
export function listFormats(options: { geo: boolean; calendar: boolean }): Format[] {
  return [
    'json',
    ...(options.geo ? (['geojson'] as const) : []),
    'csv',
    ...(options.calendar ? (['ics'] as const) : []),
  ];
}

export const mediaTypesOf = (formats: readonly Format[]): string[] => formats.map((format) => FORMATS[format]);

const DESCRIBED: Record<Format, string> = {
  json: '`json` (the default)',
  csv: '`csv` (`text/csv`: a header row, then one row per record; no envelope, the pages in the `Link` header)',
  geojson: '`geojson` (`application/geo+json`: a FeatureCollection of the records that have coordinates)',
  ics: '`ics` (`text/calendar`: iCalendar, one VEVENT per record)',
};

export function formatParam(formats: readonly Format[]) {
  return Type.Optional(
    Type.Unsafe<Format>(
      Type.String({
        enum: [...formats],
        description:
          `The representation, instead of the \`Accept\` header, which it overrides: ${formats.map((f) => DESCRIBED[f]).join(', ')}. ` +
          'For clients that cannot set `Accept`, such as GIS tools and spreadsheets.',
      }),
    ),
  );
}

/** The details answer JSON only: `format=json` is accepted, any other value is a 400 rather than JSON in disguise. */
export const detailFormatParam = Type.Optional(
  Type.Unsafe<'json'>(
    Type.String({ enum: ['json'], description: 'Only `json`: a record has no other representation.' }),
  ),
);

/**
 * The media type of a list request (`format`, else `Accept`); throws 406 when the Accept header allows none of the
 * list's types. Vary: Accept on every answer of a list, the 406 included.
 */
export function listMediaType(request: FastifyRequest, reply: FastifyReply, offered: readonly string[]): string {
  const type = requestMediaType(request);
  if (type === undefined) {
    const before = reply.getHeader('vary');
    reply.header('vary', before ? `${String(before)}, Accept` : 'Accept');
    throw new NotAcceptableError(offered);
  }
  return type;
}

export const CALENDAR_CONTENT_TYPE = `${CALENDAR_TYPE}; charset=utf-8`;

/**
 * The OpenAPI schemas of the text representations (`text/csv`, `text/calendar`) of a list whose items have these
 * fields, beside JSON (and GeoJSON, geojson.ts) in its 200: strings, with an example of each.
 */
export function mediaSchemas(formats: readonly Format[], names: readonly string[]): Record<string, TSchema> {
  const media: Record<string, TSchema> = {};
  if (formats.includes('csv'))
    media[CSV_TYPE] = Type.String({
      description:
        'RFC 4180, UTF-8: a header row of the fields (the item schema in order, or those of `fields`), then one row ' +
        'per record, CRLF line ends. Text in double quotes, numbers and booleans bare, null an empty unquoted cell, ' +
        'arrays and objects as their JSON text; a text a spreadsheet would run as a formula (`=` and more, or `+`, `-`, ' +
        '`@` with a `(`, `|`, `!` or `[` after it; after any apostrophes and leading whitespace) gets an apostrophe in front. With `group_by`: two columns, the field and `count`.',
      examples: [`${names.slice(0, 2).join(',')}\r\n"…","…"\r\n`],
    });
  if (formats.includes('ics'))
    media[CALENDAR_TYPE] = Type.String({
      description:
        'RFC 5545: one all-day VEVENT per record (UID, DTSTAMP, DTSTART;VALUE=DATE, DTEND the day after the last day, ' +
        'SUMMARY, URL, DESCRIPTION, LOCATION and GEO when known, CATEGORIES).',
      examples: ['BEGIN:VCALENDAR\r\nVERSION:2.0\r\n…\r\nEND:VCALENDAR\r\n'],
    });
  return media;
}

const EXTENSIONS: Record<string, string> = { [CSV_TYPE]: 'csv', [CALENDAR_TYPE]: 'ics' };

/**
 * `Content-Disposition` of a CSV or calendar answer, named after the list's path (`chapters.csv`,
 * `snapshots-2025-02-issues.csv`, `projects-by-level.csv`). Set as the answer is sent, from the request alone, so that
 * an answer of the response cache (which keeps the body, its type and `Link`) carries it too.
 */
export function setContentDisposition(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  done(null, withContentDisposition(request, reply, payload));
}

function withContentDisposition(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (reply.statusCode !== 200) return payload;
  const extension = EXTENSIONS[String(reply.getHeader('content-type')).split(';')[0]!.trim()];
  if (extension === undefined) return payload;
  const path = request.url.split('?')[0]!.replace(/^\/api\/v0\//, '');
  // Read raw on an answer of the cache (before validation normalizes it): trimmed and in lower case alike.
  const groupBy = (request.query as { group_by?: unknown }).group_by;
  const field = typeof groupBy === 'string' ? groupBy.trim().toLowerCase() : '';
  const parts = [...path.split('/').filter(Boolean), ...(field ? ['by', field] : [])];
  const name =
    parts
      .join('-')
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 100) || 'list';
  reply.header('content-disposition', `attachment; filename="${name}.${extension}"`);
  return payload;
}

export const NotAcceptableBody = Type.Object(
  {
    message: Type.Literal('Not acceptable'),
    errors: Type.Array(Type.Object({ loc: Type.Array(Type.String()), msg: Type.String() })),
  },
  {
    title: 'NotAcceptableError',
    examples: [
      {
        message: 'Not acceptable',
        errors: [{ loc: ['header', 'accept'], msg: `must allow one of: ${JSON_TYPE}, ${CSV_TYPE}` }],
      },
    ],
  },
);

export { CALENDAR_TYPE, CSV_TYPE, GEOJSON_TYPE, JSON_TYPE };
