// Content negotiation for the few operations that offer more than JSON (the chapters and events lists
// also answer application/geo+json). A route opts in with `config.mediaTypes`, its first type the
// default; every other route ignores Accept, as before. RFC 9110 §12.5.1: the most specific range
// that matches a type gives its quality; the best quality wins, then the more specific match, then
// the route's order, so `*/*` and `application/json, */*` get JSON and a client naming only other
// types gets 406.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Media types the route can answer, the default first (absent: JSON only, Accept ignored). */
    mediaTypes?: readonly string[];
  }
}

export const JSON_TYPE = 'application/json';

export class NotAcceptableError extends AppError {
  constructor(offered: readonly string[]) {
    super(
      406,
      {
        message: 'Not acceptable',
        errors: [{ loc: ['header', 'accept'], msg: `must allow one of: ${offered.join(', ')}` }],
      },
      { vary: 'Accept' },
    );
  }
}

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
 * The media type of this request's answer: JSON for a route that does not negotiate, else the
 * negotiated type, or undefined when the Accept header allows none of the route's types. Read by the
 * response cache (before the handler) and the handler alike, so it is worked out once.
 */
export function requestMediaType(request: FastifyRequest): string | undefined {
  if (negotiated.has(request)) return negotiated.get(request);
  const offered = request.routeOptions.config.mediaTypes;
  const type = offered ? negotiate(headerValue(request.headers.accept), offered) : JSON_TYPE;
  negotiated.set(request, type);
  return type;
}

const negotiated = new WeakMap<FastifyRequest, string | undefined>();

/** Whether the route's answer depends on Accept (then it says so in Vary). */
export function negotiates(request: FastifyRequest): boolean {
  return request.routeOptions.config.mediaTypes !== undefined;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
