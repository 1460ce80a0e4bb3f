// Serialized REST responses, kept per normalized request (path + sorted query, and the negotiated
// media type where a route offers several; never the key) and served only after authentication and the rate limit passed. Every 200 gets an ETag, and a
// matching If-None-Match gets 304. Entries belong to a data version and die with it.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DataVersionWatcher } from '../../../announcements/data-version.ts';
import { negotiates, requestMediaType } from '../../../http/negotiate.ts';
import { linkBase } from '../../../http/link-base.ts';
import { EmptiedMap, ENTRY, memory, type Share } from '../../../memory-budget.ts';
import type { Series } from '../../../metrics/metrics.ts';

export interface Entry {
  body: Buffer;
  etag: string;
  contentType: string;
  link: string | undefined;
  /** The Vary header of the answer (X-API-Key, and Accept where the route negotiates). */
  vary: string;
  /** The route's template, for the request metrics of an early answer. */
  route: string;
  /** The header fields of its early answers, built at its first one (early-answers.ts). */
  early?: EarlyFields;
  /** The cache's count of refreshes when this entry was last moved to the young end (ResponseCache.get). */
  refreshed?: number;
  /** Its estimated cost in the cache (ResponseCache.set). */
  bytes?: number;
  /** The route's own headers, the same on every answer (config.headers): sent again with every hit. */
  headers?: Readonly<Record<string, string>>;
}

/** What the early answers keep of an entry (early-answers.ts). */
export interface EarlyFields {
  /**
   * The header fields of its answers, name then value, without CORS and with: the entry's own, and slots that each
   * hit fills again before writeHead reads them (the request id's value at index 1, the limit's from `limitAt`, the
   * key's expiry at `expiry` + 1, the Link's last).
   */
  plain: (string | number)[];
  cors: (string | number)[];
  limitAt: number;
  expiry: number;
  /** The request metrics' series of its answers. */
  series: Series;
  /** The Link value last sent, with its request's origin, and the Host header of that request. */
  link?: string;
  linkHost?: string | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Headers of every answer of the route, the same for each: set by the REST scope's hook, kept with its entries. */
    headers?: Readonly<Record<string, string>>;
  }
}

const MAX_ENTRIES = 5_000;
/** How many entries moved to the young end after an entry leave it where it is on a hit (ResponseCache.get). */
const YOUNGEST = 8;
// Keyed responses must not be kept by shared caches; clients revalidate with the ETag.
export const CACHE_CONTROL = 'private, no-cache';

/**
 * Bounded by entries and by the bytes of the responses' share of the memory budget (memory-budget.ts): an entry costs
 * its body, its key and headers as text, and ENTRY.
 */
export class ResponseCache {
  private entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly share: Share = memory.shares.responses) {}

  hits = 0;
  /** Of the hits, those answered before the routes (early-answers.ts). */
  earlyHits = 0;
  misses = 0;

  /** Moves to the young end of the eviction order, counted. */
  private refreshes = 0;

  get(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Refresh its place (the Map's order is the eviction order), unless it is already among the YOUNGEST entries at
    // the young end: a hot entry is then not deleted and set again on every hit. (Those younger ones together hold at
    // most YOUNGEST × a sixteenth of the share, half of it: it cannot be evicted before them.)
    if (entry.refreshed === undefined || this.refreshes - entry.refreshed >= YOUNGEST) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      entry.refreshed = ++this.refreshes;
    }
    return entry;
  }

  set(key: string, entry: Entry): void {
    const limit = this.share.limit;
    const size =
      ENTRY + entry.body.length + 2 * (key.length + entry.etag.length + (entry.link?.length ?? 0) + entry.vary.length);
    if (size > limit / 16) return;
    this.delete(key);
    this.entries.set(key, entry);
    entry.bytes = size;
    entry.refreshed = ++this.refreshes;
    this.account(size);
    while (this.entries.size > MAX_ENTRIES || this.bytes > limit) {
      this.delete(this.entries.keys().next().value!);
    }
  }

  clear(): void {
    this.entries.clear();
    this.account(-this.bytes);
  }

  /** Bytes held (an estimate, memory-budget.ts). */
  get used(): number {
    return this.bytes;
  }

  private account(bytes: number): void {
    this.bytes += bytes;
    this.share.used += bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  private delete(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.account(-(old.bytes ?? 0));
    this.entries.delete(key);
  }
}

// Normalized keys of recent request URLs: a cached response is mostly asked for by the same URL again,
// and sorting its query on every hit was a visible part of the cost of a hit. Short URLs only.
const keys = new EmptiedMap<string>(10_000, (url, key) => ENTRY + 2 * (url.length + key.length));

export function normalizedKey(url: string): string {
  let key = keys.get(url);
  if (key === undefined) {
    key = normalize(url);
    if (url.length <= 256) keys.set(url, key);
  }
  return key;
}

/**
 * The cache key of a URL the routes have already seen in the REST scope (GET or HEAD of a route that caches), without
 * computing it: undefined for any other URL. The early answer takes only such URLs, so that it never answers one the
 * router would not have sent to a cached route.
 */
export function knownKey(url: string): string | undefined {
  return keys.get(url);
}

function normalize(url: string): string {
  const [path = '', search = ''] = url.split('?');
  const params = new URLSearchParams(search);
  params.sort();
  const query = params.toString();
  return query ? `${path.replace(/\/+$/, '')}?${query}` : path.replace(/\/+$/, '');
}

/**
 * The cache key of a request: its normalized URL, plus the media type when it is not the route's
 * default (a GeoJSON answer never serves a JSON request, nor the reverse). Undefined when the
 * Accept header allows none of the route's types: the handler answers 406.
 */
function cacheKey(request: FastifyRequest): string | undefined {
  const type = requestMediaType(request);
  if (type === undefined) return undefined;
  const offered = request.routeOptions.config.mediaTypes;
  const url = normalizedKey(request.url);
  return offered && type !== offered[0] ? `${url}\u0000${type}` : url;
}

export function etagOf(body: Buffer | string): string {
  return `"${crypto.createHash('sha1').update(body).digest('base64url')}"`;
}

function matches(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  return header === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * The cache of the REST scope: returns a lookup to run after authentication and the rate limit
 * (true when it answered the request), and stores 200 responses as they are sent.
 */
export function createResponseCache(
  app: FastifyInstance,
  cache: ResponseCache,
  watcher: DataVersionWatcher,
  enabled = true,
) {
  watcher.onChange(() => cache.clear());
  // The data version a request started under (-1: not a cacheable read).
  app.decorateRequest('cacheVersion', -1);
  registerStore(app, cache, watcher);

  return (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (!enabled || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
    const key = cacheKey(request);
    if (key === undefined) return false;
    request.cacheVersion = watcher.version;
    const entry = cache.get(key);
    if (!entry) {
      cache.misses++;
      return false;
    }
    cache.hits++;
    reply.headers({ etag: entry.etag, 'cache-control': CACHE_CONTROL, vary: vary(request, reply), 'x-cache': 'HIT' });
    // Kept from the path on; the address of this request's origin put back (linkBase: PUBLIC_URL or its host).
    if (entry.link) reply.header('link', entry.link.replaceAll('</', `<${linkBase(request)}/`));
    if (matches(request, entry.etag)) {
      reply.code(304).send();
      return true;
    }
    // HEAD too gets the body: Fastify sets its Content-Length from it and Node sends no body for HEAD. (Without it a
    // warm HEAD said `Content-Length: 0`, and a client that sizes a download by HEAD, GDAL's /vsicurl/, read nothing.)
    reply.header('content-type', entry.contentType).send(entry.body);
    return true;
  };
}

/** X-API-Key (and Accept where the route negotiates), after what the reply already varies on (Origin, with a CORS_ORIGINS list). */
function vary(request: FastifyRequest, reply: FastifyReply): string {
  const before = reply.getHeader('vary');
  const own = negotiates(request) ? 'X-API-Key, Accept' : 'X-API-Key';
  return before ? `${String(before)}, ${own}` : own;
}

function registerStore(app: FastifyInstance, cache: ResponseCache, watcher: DataVersionWatcher): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode !== 200 || reply.getHeader('x-cache') === 'HIT') return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
    const etag = etagOf(body);
    const varies = vary(request, reply);
    reply.headers({ etag, 'cache-control': CACHE_CONTROL, vary: varies, 'x-cache': 'MISS' });
    // Stored only if no data change happened while the response was being built.
    const key = cacheKey(request);
    if (
      request.method === 'GET' &&
      key !== undefined &&
      request.cacheVersion !== -1 &&
      request.cacheVersion === watcher.version
    ) {
      cache.set(key, {
        body,
        etag,
        contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
        link: relativeLinks(request, reply.getHeader('link') as string | undefined),
        vary: varies,
        route: request.routeOptions.url ?? 'unmatched',
        ...(request.routeOptions.config.headers ? { headers: request.routeOptions.config.headers } : {}),
      });
    }
    if (matches(request, etag)) {
      reply.code(304);
      return '';
    }
    // The bytes just hashed: sending them spares a second encoding of the string.
    return body;
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    cacheVersion: number;
  }
}

/** A Link header without this request's origin (a host of one request must never reach another's answer). */
function relativeLinks(request: FastifyRequest, link: string | undefined): string | undefined {
  const base = linkBase(request);
  return link && base ? link.replaceAll(`<${base}/`, '</') : link;
}
