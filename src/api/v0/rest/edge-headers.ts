// Public answers for a shared cache (issue 44, docs/edge.md). With REST_AUTH=optional and EDGE_MAX_AGE_S > 0, a GET or
// HEAD without a key (no X-API-Key at all, not even an empty one, and no Authorization) of a list, a detail, the
// search or the dumps is `public` for EDGE_MAX_AGE_S at the edge (`s-maxage`; browsers revalidate, `max-age=0`) and
// names its tags (Surrogate-Key for Varnish and Fastly, Cache-Tag for Cloudflare; edge/edge-tags.ts), which a change
// purges. Such an answer carries nothing of its caller: the RateLimit fields, the request id and this instance's own
// X-Cache are left out (the edge adds its own: docs/edge.md). Everything else stays as it was (`private`), and an
// error other than 404 says `no-store`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DataVersionWatcher } from '../../../announcements/data-version.ts';
import { isLoggedResource } from '../../../changes/change-log.ts';
import { DUMPS_TAG, recordTag, resourceTag, uniqueTags, versionTag } from '../../../edge/edge-tags.ts';
import { SEARCH_RESOURCES } from '../search/search.queries.ts';
import { ALLOW_ANY_ORIGIN, EXPOSED_HEADERS } from './cors.ts';

/** How long the edge may answer with an entry while it fetches the new one. */
export const STALE_WHILE_REVALIDATE_S = 30;
/** How long the edge may answer with an entry while the service cannot answer (a day). */
export const STALE_IF_ERROR_S = 86_400;
/** Past this many bytes the record tags of a page are left out (the list's own tag still covers it). */
const MAX_TAG_BYTES = 8_000;
const PREFIX = '/api/v0/';

/** Headers that would tell one caller's state to every other reader of a shared entry. */
const CALLERS_OWN = [
  'x-request-id',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'api-key-expiration',
  'x-cache',
];

export function publicCacheControl(maxAgeS: number): string {
  return `public, max-age=0, s-maxage=${maxAgeS}, stale-while-revalidate=${STALE_WHILE_REVALIDATE_S}, stale-if-error=${STALE_IF_ERROR_S}`;
}

/** What a route's answers are tagged with: its own tags, and the resource whose records its items are. */
interface RouteTags {
  tags: string[];
  /** The resource of the items of a list page (their record tags); undefined for a detail or the dumps. */
  items?: string;
  search?: boolean;
}

/** The tags of a route, from its template and this request's path parameters; undefined: never public. */
function routeTags(request: FastifyRequest): RouteTags | undefined {
  const template = request.routeOptions.url;
  if (!template?.startsWith(PREFIX)) return undefined;
  const parts = template.slice(PREFIX.length).split('/').filter(Boolean);
  const [first, ...rest] = parts;
  if (first === 'dumps') return { tags: [DUMPS_TAG] };
  if (first === 'search' && rest.length === 0) return { tags: SEARCH_RESOURCES.map(resourceTag), search: true };
  if (first === undefined || !isLoggedResource(first)) return undefined;
  const params = request.params as Record<string, string>;
  const values: string[] = [];
  let i = 0;
  for (; i < rest.length && rest[i]!.startsWith(':'); i++) values.push(String(params[rest[i]!.slice(1)] ?? ''));
  if (i === rest.length) {
    return values.length === 0
      ? { tags: [resourceTag(first)], items: first }
      : { tags: [recordTag(first, values.join('/'))] };
  }
  // A list under a record: `/snapshots/{id}/issues/`, `/repositories/{org}/{repo}/labels/`.
  const nested = rest[i]!;
  if (i !== rest.length - 1 || !isLoggedResource(nested)) return undefined;
  return { tags: [recordTag(first, values.join('/')), resourceTag(nested)], items: nested };
}

/** The kinds of GitHub address whose last two parts are a record's number under its repository. */
const NUMBERED = new Set(['issues', 'pull', 'milestone']);

/**
 * `owner/repo/number` from a GitHub address ending `/{owner}/{repo}/{issues|pull|milestone}/{number}`, read from the
 * end in one pass: a regular expression unanchored at the start tried every position, a tenth of a page's CPU.
 */
function numberedKey(url: string): string | undefined {
  const numberAt = url.lastIndexOf('/');
  const number = url.slice(numberAt + 1);
  if (!/^\d+$/.test(number)) return undefined;
  const kindAt = url.lastIndexOf('/', numberAt - 1);
  if (kindAt < 0 || !NUMBERED.has(url.slice(kindAt + 1, numberAt))) return undefined;
  const repoAt = url.lastIndexOf('/', kindAt - 1);
  if (repoAt < 0) return undefined;
  const repo = url.slice(repoAt + 1, kindAt);
  const owner = url.slice(url.lastIndexOf('/', repoAt - 1) + 1, repoAt);
  return owner === '' || repo === '' ? undefined : `${owner}/${repo}/${number}`;
}

/** A list item's key as its changes name it, where the item says it (records of others only by their list's tag). */
function itemKey(item: Record<string, unknown>): string | undefined {
  if (typeof item.key === 'string') return item.key;
  if (typeof item.login === 'string') return item.login;
  // An issue's or a milestone's GitHub address ends with its repository and number, its detail's path.
  return typeof item.url === 'string' ? numberedKey(item.url) : undefined;
}

/** A JSON page as it is sent: its items, or its features (GeoJSON). */
interface Page {
  items?: unknown;
  features?: unknown;
}

/** The record tags of a page: its items, or its features' properties (GeoJSON), or the search's results. */
function recordTagsOf(page: Page, resource: string | undefined): string[] {
  const tags: string[] = [];
  if (resource === undefined && Array.isArray(page.items)) {
    for (const item of page.items as { resource?: unknown; id?: unknown }[])
      if (item && typeof item.resource === 'string' && typeof item.id === 'string')
        tags.push(recordTag(item.resource, item.id));
    return tags;
  }
  const items = Array.isArray(page.items)
    ? (page.items as Record<string, unknown>[])
    : Array.isArray(page.features)
      ? (page.features as { properties?: Record<string, unknown> }[]).map((feature) => feature?.properties ?? {})
      : [];
  for (const item of items) {
    const key = item && typeof item === 'object' ? itemKey(item) : undefined;
    if (key !== undefined) tags.push(recordTag(resource!, key));
  }
  return tags;
}

/** The record tags of a JSON body (an answer whose page object this step did not see: the response cache's). */
function recordTags(body: string, resource: string | undefined): string[] {
  try {
    return recordTagsOf(JSON.parse(body) as Page, resource);
  } catch {
    return [];
  }
}

/** Whether a request may get a public answer at all: a keyless read. */
function keyless(request: FastifyRequest): boolean {
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    request.headers['x-api-key'] === undefined &&
    request.headers.authorization === undefined
  );
}

/** Registers the step in the REST scope, after the response cache's own onSend (which sets `private, no-cache`). */
export function registerEdgeHeaders(app: FastifyInstance, watcher: DataVersionWatcher): void {
  const { restAuth, edgeMaxAgeS } = app.config;
  if (restAuth !== 'optional' || edgeMaxAgeS === 0) return;
  const cacheControl = publicCacheControl(edgeMaxAgeS);
  const anyOrigin = app.config.corsOrigins.includes('*');
  // A cached body is one Buffer for as long as the response cache keeps it: its record tags are read once.
  const bodies = new WeakMap<Buffer, string[]>();
  // A page built for this request: its record tags read from its objects before they are written, rather than from
  // the JSON written (a parse of the whole body again: as much CPU as building the page, on every public miss).
  const built = new WeakMap<FastifyRequest, string[]>();

  const tagsOf = (request: FastifyRequest, reply: FastifyReply, payload: unknown): string[] | undefined => {
    const route = routeTags(request);
    if (!route) return undefined;
    const version = request.cacheVersion >= 0 ? request.cacheVersion : watcher.version;
    const own = [...route.tags, versionTag(version)];
    const json = /json/.test(String(reply.getHeader('content-type') ?? ''));
    if (reply.statusCode !== 200 || (route.items === undefined && !route.search) || !json) return own;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return own;
    const kept = Buffer.isBuffer(payload) ? bodies.get(payload) : undefined;
    const records =
      kept ?? built.get(request) ?? recordTags(payload.toString(), route.search ? undefined : route.items);
    if (kept === undefined && Buffer.isBuffer(payload)) bodies.set(payload, records);
    const all = uniqueTags([...route.tags, ...records, versionTag(version)]);
    return all.join(' ').length > MAX_TAG_BYTES ? own : all;
  };

  app.addHook('preSerialization', (request, reply, payload, done) => {
    if (reply.statusCode === 200 && keyless(request) && payload !== null && typeof payload === 'object') {
      const route = routeTags(request);
      if (route && (route.items !== undefined || route.search))
        built.set(request, recordTagsOf(payload as Page, route.search ? undefined : route.items));
    }
    done(null, payload);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const status = reply.statusCode;
    const answerable = status === 200 || status === 304 || status === 404;
    const tags = answerable && keyless(request) ? tagsOf(request, reply, payload) : undefined;
    if (!tags) {
      if (status >= 400 && status !== 404) reply.header('cache-control', 'private, no-store');
      return done(null, payload);
    }
    reply.header('cache-control', cacheControl);
    for (const name of CALLERS_OWN) reply.removeHeader(name);
    // One stored answer for every reader: with any origin allowed, a public answer carries the CORS fields whether or
    // not this request had an Origin, and does not vary on it (a keyed answer gets them only with Origin: cors.ts).
    if (anyOrigin) {
      reply.headers({
        'access-control-allow-origin': ALLOW_ANY_ORIGIN,
        'access-control-expose-headers': EXPOSED_HEADERS,
      });
      const vary = String(reply.getHeader('vary') ?? '')
        .split(/,\s*/)
        .filter((name) => name !== '' && name !== 'Origin');
      if (vary.length > 0) reply.header('vary', vary.join(', '));
      else reply.removeHeader('vary');
    }
    // A 304 names no tags: the edge keeps those of the entry it revalidated (a page's record tags among them).
    if (status !== 304) reply.header('surrogate-key', tags.join(' ')).header('cache-tag', tags.join(','));
    done(null, payload);
  });
}
