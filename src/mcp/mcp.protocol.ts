// JSON-RPC 2.0 as the Model Context Protocol's Streamable HTTP transport carries it: one message per POST, answered
// with one JSON body (a request) or 202 (a notification or a response). https://modelcontextprotocol.io/specification
import { AppError } from '../errors.ts';
import { MAX_JSON_DEPTH, nestedDeeper } from '../http/json-nesting.ts';

/** The revisions of the protocol served, newest first: those of @modelcontextprotocol/sdk 1.32 that have Streamable HTTP. */
export const PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
/** A request without MCP-Protocol-Version is read as this revision (the specification's rule). */
const ASSUMED_VERSION = '2025-03-26';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

export type Id = string | number;

export type Message =
  | { kind: 'request'; id: Id; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string }
  | { kind: 'response' };

/** A message that cannot be answered as JSON-RPC asks (unreadable, not a message, an unknown revision): HTTP 400. */
export class ProtocolError extends AppError {
  constructor(code: number, message: string, id: Id | null = null) {
    super(400, { jsonrpc: '2.0', id, error: { code, message } });
  }
}

/** An error answer to a readable request (unknown method, invalid parameters): HTTP 200 carrying it. */
export class RequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isId = (value: unknown): value is Id =>
  (typeof value === 'string' && value.length <= 200) || (typeof value === 'number' && Number.isSafeInteger(value));

/** The body of a POST as one message. */
export function readMessage(body: string): Message {
  // Before parsing: a value nested deeper is walked by recursion further on (the key of a kept answer, the checks).
  if (nestedDeeper(body))
    throw new ProtocolError(INVALID_REQUEST, `Invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ProtocolError(PARSE_ERROR, 'Parse error: the body is not JSON');
  }
  if (Array.isArray(value))
    throw new ProtocolError(INVALID_REQUEST, 'Batches are not supported: send one JSON-RPC message per request');
  if (!isObject(value) || value.jsonrpc !== '2.0')
    throw new ProtocolError(INVALID_REQUEST, 'Invalid request: not a JSON-RPC 2.0 message');
  const { id, method, params } = value;
  if (typeof method === 'string') {
    if (params !== undefined && !isObject(params))
      throw new ProtocolError(INVALID_REQUEST, 'Invalid request: params must be an object', isId(id) ? id : null);
    if (id === undefined) return { kind: 'notification', method };
    if (!isId(id)) throw new ProtocolError(INVALID_REQUEST, 'Invalid request: id must be a string or an integer');
    return { kind: 'request', id, method, params: params ?? {} };
  }
  if (isId(id) && ('result' in value || 'error' in value)) return { kind: 'response' };
  throw new ProtocolError(INVALID_REQUEST, 'Invalid request: neither a request, a notification nor a response');
}

/** The revision a request's MCP-Protocol-Version header names; 400 for one not served. */
export function checkVersionHeader(header: string | string[] | undefined): string {
  if (header === undefined) return ASSUMED_VERSION;
  if (typeof header === 'string' && PROTOCOL_VERSIONS.includes(header)) return header;
  throw new ProtocolError(
    INVALID_REQUEST,
    `Unsupported MCP-Protocol-Version: ${String(header).slice(0, 40)} (supported: ${PROTOCOL_VERSIONS.join(', ')})`,
  );
}

/** Version negotiation: the client's revision when served, else the newest one (the client then decides). */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === 'string' && PROTOCOL_VERSIONS.includes(requested) ? requested : PROTOCOL_VERSIONS[0]!;
}

/** An answer is this, its request's id, then its end (`resultEnd`). */
const ANSWER_START_TEXT = '{"jsonrpc":"2.0","id":';
const ANSWER_START = Buffer.from(ANSWER_START_TEXT);
const resultEndText = (resultJson: string) => `,"result":${resultJson}}`;

/** The answer to a request, around its result's JSON text. */
export function resultBody(id: Id, resultJson: string): string {
  return `${ANSWER_START_TEXT}${JSON.stringify(id)}${resultEndText(resultJson)}`;
}

/** The end of an answer, from `,"result":` to the message's last `}`, as bytes: what mcp.results.ts keeps. */
export function resultEnd(resultJson: string): Buffer {
  return Buffer.from(resultEndText(resultJson));
}

/**
 * The answer to a request whose result was kept: `idJson` is its id as JSON.stringify writes it, `end` its kept end
 * (`resultEnd`). The same bytes as `resultBody`.
 */
export function answerBytes(idJson: string, end: Buffer): Buffer {
  const idLength = Buffer.byteLength(idJson);
  const bytes = Buffer.allocUnsafe(ANSWER_START.length + idLength + end.length);
  ANSWER_START.copy(bytes, 0);
  bytes.write(idJson, ANSWER_START.length);
  end.copy(bytes, ANSWER_START.length + idLength);
  return bytes;
}

export function errorBody(id: Id, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}
