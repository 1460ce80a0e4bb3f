// Kept tool calls answered early (issue 46, item 1): a POST /mcp whose `tools/call` was answered before under this
// data version (mcp.results.ts) is sent from the HTTP server's request listener, as REST's cached hits are
// (api/v0/rest/early-answers.ts): no routing, no hook chain, no in-process REST request. The order is the route's:
// the key is authenticated (only a key remembered as valid: no I/O), the message read, the call counted against the
// limit, and only then is the kept answer taken.
//
// What it costs beyond a cached GET is kept small (docs/decisions.md, "mcp"): a message seen before is recognised by
// its text around its id (`Shapes`: no JSON parse, no key made), the answer is the kept bytes with the request's id
// spliced in (`answerBytes`: no result text made again), and its header fields are one array whose values each answer
// writes (no copy).
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
import { fixedLimitFields, pushLimitState, setLimitState, type Counted } from '../access/rate-limit.ts';
import { keyExpiration } from '../access/authenticate.ts';
import { baseSecurityHeaders } from '../http/security-headers.ts';
import { negotiate } from '../http/negotiate.ts';
import { loggedRequest, requestLogs } from '../http/early-log.ts';
import { requestId, REQUEST_ID_HEADER } from '../http/request-id.ts';
import type { HttpMetrics } from '../metrics/metrics.ts';
import { readWholeBody, type EarlyAnswers } from '../http/server-factory.ts';
import { answerBytes, checkVersionHeader, readMessage } from './mcp.protocol.ts';
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
  // The route's header fields, in its order: one array, whose values each answer writes (its id, its key's expiry, its
  // length, its count). No copy per answer: writeHead reads the array before it returns and keeps nothing of it, and
  // nothing runs between an answer's writing and its writeHead.
  const headers: (string | number)[] = [
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
  const at = (name: string) => headers.indexOf(name) + 1;
  const ID = at(REQUEST_ID_HEADER);
  const EXPIRATION = at('api-key-expiration');
  const LENGTH = at('content-length');
  const LIMIT_AT = headers.length;
  pushLimitState(headers, gate.fields, gate.limit, 0, 0);
  const series = metrics.series('POST', path, 200);
  const shapes = new Shapes(results);

  const send = (req: IncomingMessage, res: ServerResponse, body: Buffer, identity: KeyIdentity, counted: Counted) => {
    const started = performance.now();
    const reqId = requestId(req);
    const logging = requestLogs(log);
    if (logging) log.info({ reqId, req: loggedRequest(req) }, 'incoming request');
    headers[ID] = reqId;
    headers[EXPIRATION] = keyExpiration(identity);
    headers[LENGTH] = body.length;
    setLimitState(headers, LIMIT_AT, gate.fields, gate.limit, counted.hit.count, counted.hit.resetMs);
    gate.used(identity);
    metrics.mcpEarlyAnswers++;
    res.writeHead(200, headers).end(body);
    const ms = performance.now() - started;
    metrics.observe(series, ms / 1000);
    if (logging) log.info({ reqId, res: { statusCode: 200 }, responseTime: ms }, 'request completed');
  };

  /** With the whole body read: answered here, or handed to the route with the body. */
  const decide = (req: IncomingMessage, res: ServerResponse, next: EarlyNext, header: string, body: Buffer) => {
    if (closing()) return handOn(req, res, next, body);
    // Looked at again: the body may have come in another turn of the event loop than the headers.
    const identity = gate.remembered(header);
    const call = identity === undefined ? undefined : shapes.call(body.toString('utf8'));
    if (identity === undefined || call === undefined) return handOn(req, res, next, body);
    const counting = gate.count(identity);
    if (!(counting instanceof Promise)) {
      const end = results.get(call.key);
      if (counting.hit.count > gate.limit || end === undefined) {
        gate.handOver(req, counting);
        return handOn(req, res, next, body);
      }
      return send(req, res, answerBytes(call.id, end), identity, counting);
    }
    // Counted in Redis: what the count brought back may have revoked the key or changed the data; both are looked at
    // again, and anything in doubt goes to the route with its count.
    counting.then(
      ({ counted, changed }) => {
        const stillIdentity = changed ? gate.remembered(header) : identity;
        const end = results.get(call.key);
        if (counted.hit.count > gate.limit || stillIdentity === undefined || end === undefined) {
          gate.handOver(req, counted);
          return handOn(req, res, next, body);
        }
        send(req, res, answerBytes(call.id, end), stillIdentity, counted);
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
    // The body whole, straight from Node's parser (readWholeBody): no stream buffer, no 'readable' ticks.
    if (!readWholeBody(req, (body) => decide(req, res, next, header, body))) return next(req, res);
  };
}

/** A kept call recognised in a body: its key (mcp.results.ts) and its id as JSON.stringify writes it. */
interface Call {
  key: string;
  id: string;
}

/** Bodies of kept calls recognised by their text (`Shapes`): at most this many, of at most this length. */
const SHAPES_MAX = 128;
const SHAPE_LENGTH = 1_500;
/** Where ids start in the known shapes: a client writes its messages alike, so there are one or two. */
const STARTS_MAX = 8;
/** Two ids that no message can both carry as its last "id" member: one a number, one a string. */
const PROBES = ['-7390518264', '"mcp-probe"'];

/**
 * The text of a kept call's message around its id (its "shape"), learnt from a body read in full (JSON.parse, the
 * route's checks): a body that is a known shape with an id in its place is that call with that id, without a parse.
 *
 * A shape is kept only when it is proven: the body with two probe ids (a number, a string) put in place of the id's
 * text both read, as the route reads them (`readMessage`), as the same call with the probe as the id. The place is
 * then the value of the message's own "id" (the last one, where there are several), in a value's position, so that
 * any other id written there is read as that id and nothing else changes. An id is put in place only as a plain
 * token: an integer (safe, not -0) or a string without escapes of at most 200 characters, which reads back to the
 * very text it is (the answer carries it as it came). Anything else is read in full.
 *
 * Bounded: SHAPES_MAX shapes of at most SHAPE_LENGTH characters (emptied when full), the key made of both sides.
 */
class Shapes {
  private readonly known = new Map<string, string>();
  private readonly starts: number[] = [];

  constructor(private readonly results: ToolResults) {}

  /** The kept call of a body, or undefined: then the route answers it. */
  call(text: string): Call | undefined {
    for (const start of this.starts) {
      const end = idEnd(text, start);
      if (end === -1) continue;
      const key = this.known.get(`${text.slice(0, start)}\u0000${text.slice(end)}`);
      if (key !== undefined) return this.results.has(key) ? { key, id: text.slice(start, end) } : undefined;
    }
    return this.read(text);
  }

  /** A body read in full; its shape learnt when it is a kept call. */
  private read(text: string): Call | undefined {
    let message;
    try {
      message = readMessage(text);
    } catch {
      return undefined;
    }
    if (message.kind !== 'request' || message.method !== 'tools/call') return undefined;
    const key = this.results.keyOf(message.params.name, message.params.arguments);
    if (key === undefined || !this.results.has(key)) return undefined;
    if (text.length <= SHAPE_LENGTH) this.learn(text, key);
    return { key, id: JSON.stringify(message.id) };
  }

  private learn(text: string, key: string): void {
    // Each "id" member name of the text: the message's own is the one whose value the probes prove.
    for (let name = text.indexOf('"id"'); name !== -1; name = text.indexOf('"id"', name + 4)) {
      const start = valueStart(text, name + 4);
      const end = start === -1 ? -1 : idEnd(text, start);
      if (end === -1) continue;
      const before = text.slice(0, start);
      const after = text.slice(end);
      if (!PROBES.every((probe) => this.proves(`${before}${probe}${after}`, probe, key))) continue;
      if (this.known.size >= SHAPES_MAX) this.known.clear();
      this.known.set(`${before}\u0000${after}`, key);
      if (!this.starts.includes(start)) {
        if (this.starts.length >= STARTS_MAX) this.starts.shift();
        this.starts.push(start);
      }
      return;
    }
  }

  /** True when `text` reads as the call of `key` with `probe` as its id. */
  private proves(text: string, probe: string, key: string): boolean {
    try {
      const message = readMessage(text);
      return (
        message.kind === 'request' &&
        message.method === 'tools/call' &&
        JSON.stringify(message.id) === probe &&
        this.results.keyOf(message.params.name, message.params.arguments) === key
      );
    } catch {
      return false;
    }
  }
}

/** Where the value after a member name (ended at `from`) starts: past blanks, a colon and blanks; -1 if no colon. */
function valueStart(text: string, from: number): number {
  let i = from;
  while (isBlank(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x3a) return -1;
  i++;
  while (isBlank(text.charCodeAt(i))) i++;
  return i;
}

const isBlank = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * The end of an id written at `start` as a plain token, or -1: an integer of at most 16 digits that is safe and not
 * -0, without leading zeros; or a string of at most 200 characters with no escape, quote or control character, which
 * JSON.stringify writes back as it is.
 */
function idEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === 0x22) {
    for (let i = start + 1; i < text.length && i <= start + 201; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) return i + 1;
      if (c === 0x5c || c < 0x20) return -1;
    }
    return -1;
  }
  let i = first === 0x2d ? start + 1 : start;
  const digits = i;
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  const count = i - digits;
  if (count === 0 || count > 16) return -1;
  if (count > 1 && text.charCodeAt(digits) === 0x30) return -1;
  if (first === 0x2d && count === 1 && text.charCodeAt(digits) === 0x30) return -1;
  // A number token goes on past its digits with a fraction or an exponent: not a plain integer.
  const next = text.charCodeAt(i);
  if (next === 0x2e || next === 0x65 || next === 0x45) return -1;
  if (!Number.isSafeInteger(Number(text.slice(start, i)))) return -1;
  return i;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

type EarlyNext = (req: IncomingMessage, res: ServerResponse) => void;

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
  if (type === JSON_TYPE) return true;
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
