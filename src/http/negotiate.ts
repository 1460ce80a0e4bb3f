// Content negotiation for the operations that offer more than JSON (every list also answers text/csv, the chapters
// and events lists application/geo+json, the events list text/calendar). A route opts in with `config.mediaTypes`,
// its first type the default; every other route ignores Accept, as before. RFC 9110 §12.5.1: the most specific
// range that matches a type gives its quality; the best quality wins, then the more specific match, then the route's
// order, so `*/*` and `application/json, */*` get JSON and a client naming only other types gets 406. A `format`
// query parameter (`format=csv`) names the type instead and wins over Accept: tools such as GDAL send an Accept of
// their own that the user cannot change (docs/decisions.md, formats).
import type { FastifyRequest } from 'fastify';
import { invalidParam, NotAcceptableError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Media types the route can answer, the default first (absent: JSON only, Accept ignored). */
    mediaTypes?: readonly string[];
    /**
     * The one representation of a route that does not negotiate (issue 45: formats honest everywhere): a request whose
     * Accept allows none of these, or whose `format` names another, is refused (checkOffered) before the handler.
     */
    offers?: readonly string[];
  }
}

export const JSON_TYPE = 'application/json';
export const GEOJSON_TYPE = 'application/geo+json';
export const CSV_TYPE = 'text/csv';
export const CALENDAR_TYPE = 'text/calendar';

/** The values of `format` and the media type each one names. */
export const FORMATS = {
  json: JSON_TYPE,
  csv: CSV_TYPE,
  geojson: GEOJSON_TYPE,
  ics: CALENDAR_TYPE,
} as const;

export type Format = keyof typeof FORMATS;

interface Range {
  type: string;
  subtype: string;
  q: number;
}

const QUALITY = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** The ranges of an Accept header; malformed ones are left out (as if not sent). */
function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  for (const part of header.slice(0, 2000).split(',')) {
    const [range = '', ...params] = part.split(';');
    const [type = '', subtype = '', extra] = range.trim().toLowerCase().split('/');
    if (extra !== undefined || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const [name = '', value = ''] = param.split('=').map((s) => s.trim());
      if (name.toLowerCase() !== 'q') continue;
      if (QUALITY.test(value)) q = Number(value);
      else valid = false;
    }
    if (valid) ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The type of `offered` the Accept header prefers, or undefined when it allows none of them. */
export function negotiate(accept: string | undefined, offered: readonly string[]): string | undefined {
  const ranges = accept === undefined ? [] : parseAccept(accept);
  // No Accept (or nothing readable in it): any type, so the default.
  if (ranges.length === 0) return offered[0];
  let best: { type: string; q: number; specificity: number } | undefined;
  for (const candidate of offered) {
    const [type, subtype] = candidate.split('/') as [string, string];
    let match: { q: number; specificity: number } | undefined;
    for (const range of ranges) {
      const specificity =
        range.type === '*'
          ? 0
          : range.subtype === '*'
            ? range.type === type
              ? 1
              : -1
            : range.type === type && range.subtype === subtype
              ? 2
              : -1;
      if (specificity < 0 || (match && match.specificity >= specificity)) continue;
      match = { q: range.q, specificity };
    }
    if (!match || match.q === 0) continue;
    if (!best || match.q > best.q || (match.q === best.q && match.specificity > best.specificity))
      best = { type: candidate, ...match };
  }
  return best?.type;
}

/**
 * The media type of this request's answer: JSON for a route that does not negotiate; else the type its `format`
 * names, or the type negotiated from Accept when it has no `format`; undefined when the Accept header allows none of
 * the route's types, or `format` names none of them (validation answers that one with a 400 first). Read by the
 * response cache (before the handler, before validation) and the handler alike, so it is worked out once.
 */
export function requestMediaType(request: FastifyRequest): string | undefined {
  if (negotiated.has(request)) return negotiated.get(request);
  const offered = request.routeOptions.config.mediaTypes;
  let type: string | undefined = JSON_TYPE;
  if (offered) {
    const format = formatOf(request.query);
    type =
      format === undefined
        ? negotiate(headerValue(request.headers.accept), offered)
        : offered.find((candidate) => Object.hasOwn(FORMATS, format) && FORMATS[format as Format] === candidate);
  }
  negotiated.set(request, type);
  return type;
}

/** The raw `format` of a query, as validation will read it (trimmed, any case); undefined when absent or empty. */
function formatOf(query: unknown): string | undefined {
  const raw = query && typeof query === 'object' ? (query as Record<string, unknown>).format : undefined;
  if (raw === undefined) return undefined;
  // Repeated (`format=csv&format=json`): no type; validation refuses it.
  if (typeof raw !== 'string') return '';
  const value = raw.trim().toLowerCase();
  return value === '' ? undefined : value;
}

const negotiated = new WeakMap<FastifyRequest, string | undefined>();

/** Whether the route's answer depends on Accept (then it says so in Vary). */
export function negotiates(request: FastifyRequest): boolean {
  return request.routeOptions.config.mediaTypes !== undefined;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** The names of `format` (`json`, `csv`…) that choose one of these types. */
function formatNames(types: readonly string[]): string[] {
  return (Object.keys(FORMATS) as Format[]).filter((name) => types.includes(FORMATS[name]));
}

/**
 * For a route of one representation (`offers`, else JSON): 400 when `format` names any other (or the route has no
 * `format` at all), 406 when Accept allows none of its types; nothing when the request is answerable. Routes that
 * negotiate (`mediaTypes`) do this themselves (api/v0/common/formats.ts).
 */
export function checkOffered(request: FastifyRequest, offered: readonly string[] = [JSON_TYPE]): void {
  const format = formatOf(request.query);
  if (format !== undefined) {
    const names = formatNames(offered);
    const chosen = Object.hasOwn(FORMATS, format) ? FORMATS[format as Format] : undefined;
    if (chosen === undefined || !offered.includes(chosen))
      throw invalidParam(
        'query',
        'format',
        names.length > 0
          ? `must be one of: ${names.join(', ')} (this operation answers ${offered.join(', ')})`
          : `is not a parameter of this operation, which answers ${offered.join(', ')}`,
      );
    return;
  }
  if (negotiate(headerValue(request.headers.accept), offered) === undefined) throw new NotAcceptableError(offered);
}
