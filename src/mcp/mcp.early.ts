// Kept tool calls answered early (issue 46, item 1): a POST /mcp whose `tools/call` was answered before under this
// data version (mcp.results.ts) is sent from the HTTP server's request listener, as REST's cached hits are
// (api/v0/rest/early-answers.ts): no routing, no hook chain, no in-process REST request. The order is the route's:
// the key is authenticated (only a key remembered as valid: no I/O), the message read, the call counted against the
// limit, and only then is the kept answer taken.
//
// Everything else goes on to the route, unchanged, with the body this path read (a preParsing hook of the route gives
// it back: `takeEarlyBody`): another message or method, a call not kept, an Origin (the route decides whether it is
// allowed), a body too large or not JSON, an Accept or MCP-Protocol-Version the route would refuse, a key not
// remembered, a count past the limit (handed over with the request, as REST's early path does, so it is not counted
// twice), the app closing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyIdentity } from '../api-keys/api-keys.service.ts';
import type { Config } from '../config.ts';
import type { EarlyGate } from '../access/gate.ts';
import { fixedLimitFields, pushLimitState, type Counted } from '../access/rate-limit.ts';
import { keyExpiration } from '../access/authenticate.ts';
import { baseSecurityHeaders } from '../http/security-headers.ts';
import { negotiate } from '../http/negotiate.ts';
import { loggedRequest, requestLogs } from '../http/early-log.ts';
import { requestId, REQUEST_ID_HEADER } from '../http/request-id.ts';
import type { HttpMetrics } from '../metrics/metrics.ts';
import type { EarlyAnswers } from '../http/server-factory.ts';
import { checkVersionHeader, readMessage, resultBody, type Id } from './mcp.protocol.ts';
import type { ToolResults } from './mcp.results.ts';

export interface McpEarlyOptions {
  config: Config;
  gate: EarlyGate;
  results: ToolResults;
  path: string;
  bodyLimit: number;
  metrics: HttpMetrics;
  log: FastifyBaseLogger;
  closing: () => boolean;
}

const JSON_TYPE = 'application/json';
const CONTENT_TYPE = `${JSON_TYPE}; charset=utf-8`;
/** The body an early look read, for the route to parse as it would have read it (`takeEarlyBody`). */
const EARLY_BODY = Symbol('mcp early body');
type Carrying = IncomingMessage & { [EARLY_BODY]?: Buffer };

/** The body the early path read from this request (and forgets it), as a stream the route's parser reads. */
export function takeEarlyBody(raw: IncomingMessage): Readable | undefined {
  const carrying = raw as Carrying;
  const body = carrying[EARLY_BODY];
  if (body === undefined) return undefined;
  delete carrying[EARLY_BODY];
  return Readable.from([body], { objectMode: false });
}

/** The early answers of kept tool calls, or undefined where there are none (RESPONSE_CACHE=false). */
export function createMcpEarlyAnswers({
  config,
  gate,
  results,
  path,
  bodyLimit,
  metrics,
  log,
  closing,
}: McpEarlyOptions): EarlyAnswers | undefined {
  if (!config.responseCache) return undefined;
  const behindProxy = config.trustProxy !== false;
  // The route's header fields, in its order: the request's own values filled into a copy at the places named.
  const template: (string | number)[] = [
    REQUEST_ID_HEADER,
    '',
    ...Object.entries(baseSecurityHeaders(config.isProduction)).flat(),
    'api-key-expiration',
    '',
    'content-type',
    CONTENT_TYPE,
    ...fixedLimitFields(gate.fields, gate.limit, gate.policy),
    'content-length',
    0,
  ];
  const at = (name: string) => template.indexOf(name) + 1;
  const ID = at(REQUEST_ID_HEADER);
  const EXPIRATION = at('api-key-expiration');
  const LENGTH = at('content-length');

  /** The kept answer of this body's call, with its id, or undefined: then the route answers. */
  const kept = (body: Buffer): { id: Id; key: string } | undefined => {
    let message;
    try {
      message = readMessage(body.toString('utf8'));
    } catch {
      return undefined;
    }
    if (message.kind !== 'request' || message.method !== 'tools/call') return undefined;
    const key = results.keyOf(message.params.name, message.params.arguments);
    if (key === undefined || !results.has(key)) return undefined;
    return { id: message.id, key };
  };

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    id: Id,
    json: string,
    identity: KeyIdentity,
    counted: Counted,
  ) => {
    const started = performance.now();
    const reqId = requestId(req);
    const logging = requestLogs(log);
    if (logging) log.info({ reqId, req: loggedRequest(req) }, 'incoming request');
    const body = resultBody(id, json);
    const headers = template.slice();
    headers[ID] = reqId;
    headers[EXPIRATION] = keyExpiration(identity);
    headers[LENGTH] = Buffer.byteLength(body);
    pushLimitState(headers, gate.fields, gate.limit, counted.hit.count, counted.hit.resetMs);
    gate.used(identity);
    metrics.mcpEarlyAnswers++;
    res.writeHead(200, headers).end(body);
    const ms = performance.now() - started;
    metrics.record('POST', path, 200, ms / 1000);
    if (logging) log.info({ reqId, res: { statusCode: 200 }, responseTime: ms }, 'request completed');
  };

  /** With the whole body read: answered here, or handed to the route with the body. */
  const decide = (req: IncomingMessage, res: ServerResponse, next: EarlyNext, header: string, body: Buffer) => {
    if (closing()) return handOn(req, res, next, body);
    const identity = gate.remembered(header);
    const call = identity === undefined ? undefined : kept(body);
    if (identity === undefined || call === undefined) return handOn(req, res, next, body);
    const counting = gate.count(identity);
    if (!(counting instanceof Promise)) {
      const json = results.get(call.key);
      if (counting.hit.count > gate.limit || json === undefined) {
        gate.handOver(req, counting);
        return handOn(req, res, next, body);
      }
      return send(req, res, call.id, json, identity, counting);
    }
    // Counted in Redis: what the count brought back may have revoked the key or changed the data; both are looked at
    // again, and anything in doubt goes to the route with its count.
    counting.then(
      ({ counted, changed }) => {
        const stillIdentity = changed ? gate.remembered(header) : identity;
        const json = results.get(call.key);
        if (counted.hit.count > gate.limit || stillIdentity === undefined || json === undefined) {
          gate.handOver(req, counted);
          return handOn(req, res, next, body);
        }
        send(req, res, call.id, json, stillIdentity, counted);
      },
      () => handOn(req, res, next, body),
    );
  };

  return (req, res, next) => {
    if (req.method !== 'POST' || req.url !== path || closing() || (behindProxy && requestLogs(log)))
      return next(req, res);
    const headers = req.headers;
    const header = headers['x-api-key'];
    const length = Number(headers['content-length']);
    if (
      typeof header !== 'string' ||
      headers.origin !== undefined ||
      headers['transfer-encoding'] !== undefined ||
      headers['content-encoding'] !== undefined ||
      !(length > 0 && length <= bodyLimit) ||
      !isJson(headers['content-type']) ||
      !acceptsJson(headers.accept) ||
      !versionServed(headers['mcp-protocol-version']) ||
      gate.remembered(header) === undefined
    )
      return next(req, res);
    // Read in paused mode ('readable', read()): cheaper per request than flowing mode's 'data' and 'end'. Node's
    // parser has pushed the whole body (it ends it at Content-Length) once it calls the message complete.
    const chunks: Buffer[] = [];
    let received = 0;
    let decided = false;
    req.on('readable', () => {
      let chunk: Buffer | null;
      while ((chunk = req.read() as Buffer | null) !== null) {
        chunks.push(chunk);
        received += chunk.length;
      }
      if (decided || !req.complete) return;
      decided = true;
      decide(req, res, next, header, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    });
    // A client gone before its body arrived: nothing to answer (Node's server closes the socket).
    req.on('error', ignore);
  };
}

type EarlyNext = (req: IncomingMessage, res: ServerResponse) => void;

function ignore(): void {}

/** Leaves the request to the route, with the body read here for its parser (`takeEarlyBody`). */
function handOn(req: IncomingMessage, res: ServerResponse, next: EarlyNext, body: Buffer): void {
  (req as Carrying)[EARLY_BODY] = body;
  next(req, res);
}

/** Accept headers already looked at: a client sends the same one each time (bounded, emptied when full). */
const acceptSeen = new Map<string | undefined, boolean>();
const ACCEPT_SEEN_MAX = 64;
const ACCEPT_SEEN_LENGTH = 200;

/** True when the route would answer JSON to this Accept (its negotiation, remembered per header value). */
function acceptsJson(accept: string | undefined): boolean {
  let accepts = acceptSeen.get(accept);
  if (accepts === undefined) {
    accepts = negotiate(accept, [JSON_TYPE]) !== undefined;
    if (accept !== undefined && accept.length > ACCEPT_SEEN_LENGTH) return accepts;
    if (acceptSeen.size >= ACCEPT_SEEN_MAX) acceptSeen.clear();
    acceptSeen.set(accept, accepts);
  }
  return accepts;
}

/** The media type the route's parser takes (its content-type parser is registered for this one type). */
function isJson(type: string | undefined): boolean {
  if (type === undefined) return false;
  const semi = type.indexOf(';');
  return (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase() === JSON_TYPE;
}

function versionServed(header: string | string[] | undefined): boolean {
  try {
    checkVersionHeader(header);
    return true;
  } catch {
    return false;
  }
}
