// Cached hits answered early (issue 32, item 1): a GET that the response cache can answer is sent from the HTTP
// server's request listener, before Fastify builds its request and reply, routes it and runs the hook chain. Nothing
// about the order changes: the key is authenticated first (only a key remembered as valid is taken here: no I/O),
// then counted against the limit, and only then is the cache consulted. The headers that are the same for every
// request of an entry are built once, at its first early answer, and a hit only writes its own into them.
//
// Anything this path does not know how to answer exactly as the routes would goes on to Fastify, unchanged: another
// method, a URL the routes have not cached, a key not remembered, a conditional or negotiated request, a body, the
// app closing, a count past the limit (the routes answer 429; the count goes with the request, so it is not counted
// twice). docs/decisions.md, "early answers", lists what each answer carries.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyIdentity } from '../../../api-keys/api-keys.service.ts';
import type { Config } from '../../../config.ts';
import { baseSecurityHeaders } from '../../../http/security-headers.ts';
import { requestIdOf, REQUEST_ID_HEADER } from '../../../http/request-id.ts';
import { hostLinkBase } from '../../../http/link-base.ts';
import { loggedRequest, requestLogs } from '../../../http/early-log.ts';
import type { HttpMetrics } from '../../../metrics/metrics.ts';
import type { EarlyAnswers } from '../../../http/server-factory.ts';
import { CORS_FIELDS } from './cors.ts';
import type { EarlyGate } from '../../../access/gate.ts';
import { fixedLimitFields, pushLimitState, setLimitState, type Counted } from '../../../access/rate-limit.ts';
import { keyExpiration } from '../../../access/authenticate.ts';
import { CACHE_CONTROL, knownKey, type EarlyFields, type Entry, type ResponseCache } from './response-cache.ts';

export interface EarlyAnswersOptions {
  config: Config;
  gate: EarlyGate;
  cache: ResponseCache;
  metrics: HttpMetrics;
  log: FastifyBaseLogger;
  /** True once the app is closing: Fastify then answers 503 (return503OnClosing). */
  closing: () => boolean;
}

/** The early answers, or undefined where they cannot be exact (CORS_ORIGINS set to a list: answers vary by Origin). */
export function createEarlyAnswers({
  config,
  gate,
  cache,
  metrics,
  log,
  closing,
}: EarlyAnswersOptions): EarlyAnswers | undefined {
  if (!config.responseCache || !config.corsOrigins.includes('*')) return undefined;
  const behindProxy = config.trustProxy !== false;
  const publicBase = config.publicUrl?.replace(/\/+$/, '');
  const shared = [
    ...Object.entries(baseSecurityHeaders(config.isProduction)).flat(),
    ...fixedLimitFields(gate.fields, gate.limit, gate.policy),
  ];
  // The header fields of an entry's early answers, in the order the routes send them: one array per entry (and one
  // more with the CORS fields), built at its first hit, in which each hit writes its own values (its id, its count,
  // its key's expiry, the Link with its origin) over those of the one before. No array and no copy of the entry's
  // fields is made per hit: writeHead reads the array before it returns and keeps nothing of it, and nothing runs
  // between a hit's writing and its writeHead.
  const ID = 1;
  const earlyOf = (entry: Entry): EarlyFields => {
    const plain = [
      REQUEST_ID_HEADER,
      '',
      ...shared,
      'etag',
      entry.etag,
      'cache-control',
      CACHE_CONTROL,
      'vary',
      entry.vary,
      'x-cache',
      'HIT',
      ...Object.entries(entry.headers ?? {}).flat(),
      'content-type',
      entry.contentType,
      'content-length',
      entry.body.length,
    ];
    const limitAt = plain.length;
    pushLimitState(plain, gate.fields, gate.limit, 0, 0);
    const expiry = plain.length;
    plain.push('api-key-expiration', '');
    // Read across origins only by a page: the fields a browser needs, only when it sends Origin (Vary says so).
    const cors = [...plain, ...CORS_FIELDS];
    if (entry.link !== undefined) {
      plain.push('link', '');
      cors.push('link', '');
    }
    return { plain, cors, limitAt, expiry, series: metrics.series('GET', entry.route, 200) };
  };
  /** The entry's Link for a request's Host: made again only when it is not the Host of the entry's last hit. */
  const linkOf = (early: EarlyFields, link: string, host: string | undefined): string => {
    if (early.link === undefined || early.linkHost !== host) {
      const base = publicBase ?? (host === undefined ? '' : hostLinkBase('http', host));
      early.link = link.replaceAll('</', `<${base}/`);
      early.linkHost = host;
    }
    return early.link;
  };
  /** The entry this request may be answered with, or undefined: then the routes answer it. */
  const lookup = (url: string, accept: string | undefined): Entry | undefined => {
    const key = knownKey(url);
    if (key === undefined) return undefined;
    const entry = cache.get(key);
    if (entry === undefined) return undefined;
    // The entry under the plain key is the route's default type: taken for no Accept, */* or that very type.
    if (accept !== undefined && accept !== '*/*' && !entry.contentType.startsWith(`${accept};`)) return undefined;
    // Behind a proxy, the origin of the Link header's addresses is the forwarded one: the routes know how to read it.
    if (entry.link !== undefined && behindProxy && publicBase === undefined) return undefined;
    return entry;
  };

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    entry: Entry,
    identity: KeyIdentity,
    counted: Counted,
    fields: Fields,
  ) => {
    const started = performance.now();
    const id = requestIdOf(fields.id);
    const logging = requestLogs(log);
    if (logging) log.info({ reqId: id, req: loggedRequest(req) }, 'incoming request');
    const early = (entry.early ??= earlyOf(entry));
    const headers = fields.origin === undefined ? early.plain : early.cors;
    headers[ID] = id;
    setLimitState(headers, early.limitAt, gate.fields, gate.limit, counted.hit.count, counted.hit.resetMs);
    headers[early.expiry + 1] = keyExpiration(identity);
    if (entry.link !== undefined) headers[headers.length - 1] = linkOf(early, entry.link, fields.host);
    gate.used(identity);
    cache.hits++;
    cache.earlyHits++;
    res.writeHead(200, headers).end(entry.body);
    const ms = performance.now() - started;
    metrics.observe(early.series, ms / 1000);
    if (logging) log.info({ reqId: id, res: { statusCode: 200 }, responseTime: ms }, 'request completed');
  };

  return (req, res, next) => {
    if (
      req.method !== 'GET' ||
      closing() ||
      // Request logs name the client's address: behind a proxy it is the forwarded one, which the routes read.
      (behindProxy && requestLogs(log))
    )
      return next(req, res);
    const fields = readFields(req.rawHeaders);
    if (fields === undefined) return next(req, res);
    const header = fields.key;
    const identity = gate.remembered(header);
    if (identity === undefined) return next(req, res);
    const entry = lookup(req.url!, fields.accept);
    if (entry === undefined) return next(req, res);
    const counting = gate.count(identity);
    if (!(counting instanceof Promise)) {
      if (counting.hit.count > gate.limit) {
        gate.handOver(req, counting);
        return next(req, res);
      }
      return send(req, res, entry, identity, counting, fields);
    }
    // Counted in Redis: what the count brought back may have revoked the key or emptied the cache; both are looked at
    // again (cheap), and anything in doubt goes to the routes with its count.
    counting.then(
      ({ counted, changed }) => {
        const stillEntry = changed ? lookup(req.url!, fields.accept) : entry;
        const stillIdentity = changed ? gate.remembered(header) : identity;
        if (counted.hit.count > gate.limit || stillEntry === undefined || stillIdentity === undefined) {
          gate.handOver(req, counted);
          return next(req, res);
        }
        send(req, res, stillEntry, stillIdentity, counted, fields);
      },
      () => next(req, res),
    );
  };
}

/** The request's header fields an early answer reads (the X-API-Key always there). */
interface Fields {
  key: string;
  accept: string | undefined;
  origin: string | undefined;
  host: string | undefined;
  id: string | undefined;
}

/**
 * The fields an early answer reads, from the request's raw header lines rather than `req.headers` (which Node builds,
 * every name lower-cased, only when it is first asked for; a bare server never asks). Undefined, for the routes to
 * answer, without an X-API-Key, with a conditional request or a body, or with any of these fields twice (Node would
 * join or drop the repeats; the routes read them as Node does).
 */
function readFields(raw: string[]): Fields | undefined {
  let key: string | undefined;
  let accept: string | undefined;
  let origin: string | undefined;
  let host: string | undefined;
  let id: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // By length first: most names are then not lower-cased at all.
    switch (name.length) {
      case 4:
        if (!named(name, 'host')) break;
        if (host !== undefined) return undefined;
        host = raw[i + 1]!;
        break;
      case 6:
        if (named(name, 'accept')) {
          if (accept !== undefined) return undefined;
          accept = raw[i + 1]!;
        } else if (named(name, 'origin')) {
          if (origin !== undefined) return undefined;
          origin = raw[i + 1]!;
        }
        break;
      case 9:
        if (!named(name, 'x-api-key')) break;
        if (key !== undefined) return undefined;
        key = raw[i + 1]!;
        break;
      case 12:
        if (!named(name, REQUEST_ID_HEADER)) break;
        if (id !== undefined) return undefined;
        id = raw[i + 1]!;
        break;
      case 13:
        if (named(name, 'if-none-match')) return undefined;
        break;
      case 14:
        if (named(name, 'content-length')) return undefined;
        break;
      case 17:
        if (named(name, 'transfer-encoding')) return undefined;
        break;
    }
  }
  return key === undefined ? undefined : { key, accept, origin, host, id };
}

/** A header name, in any case, is `lower`. */
function named(name: string, lower: string): boolean {
  return name === lower || name.toLowerCase() === lower;
}
