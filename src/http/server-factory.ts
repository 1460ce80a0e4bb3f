// The HTTP server Fastify listens with: the one Fastify would make itself (its timeouts and limits), whose request
// listener first offers each request to the early answers of cached hits (api/v0/rest/early-answers.ts). Requests
// made with app.inject() do not pass here: they go straight to Fastify's handler.
import http, { IncomingMessage, type ServerResponse } from 'node:http';
import { Buffer } from 'node:buffer';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Answers the request itself, or hands it to `next` (Fastify's handler). */
export type EarlyAnswers = (req: IncomingMessage, res: ServerResponse, next: Handler) => void;

/** The early answers of GET (REST's cached hits) and of POST (/mcp's kept tool calls), each optional. */
export function combineEarlyAnswers(
  get: EarlyAnswers | undefined,
  post: EarlyAnswers | undefined,
): EarlyAnswers | undefined {
  if (get === undefined || post === undefined) return get ?? post;
  return (req, res, next) => (req.method === 'POST' ? post : get)(req, res, next);
}

const WHOLE_BODY = Symbol('whole body');

interface BodyCapture {
  chunks: Buffer[];
  length: number;
  done: (body: Buffer) => void;
}

/**
 * Node's request message, which can hand a body to one callback whole instead of through the stream (`readWholeBody`).
 * Node's parser gives each part of a body to `push`, and `push(null)` once it has called the message complete. Taken
 * here, the parts skip the stream's buffer, its 'readable' ticks and the reads that empty it, which were a fifth of
 * what a POST /mcp answered early cost (bench/POST-FLOOR.md); the stream itself is still ended (`push(null)`), so it
 * ends, is dumped and closes as one whose body was read. A message without a capture is Node's own, unchanged.
 */
export class EarlyIncomingMessage extends IncomingMessage {
  // On the prototype (below), not a field: a field would be set in a constructor at every request, GET or POST.
  declare [WHOLE_BODY]: BodyCapture | undefined;

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    const capture = this[WHOLE_BODY];
    if (capture === undefined) return super.push(chunk, encoding);
    if (chunk !== null) {
      const part = chunk as Buffer;
      capture.chunks.push(part);
      capture.length += part.length;
      return true;
    }
    this[WHOLE_BODY] = undefined;
    const more = super.push(null);
    const { chunks, length } = capture;
    capture.done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
    return more;
  }
}

EarlyIncomingMessage.prototype[WHOLE_BODY] = undefined;

/**
 * Calls `done` with the request's whole body once Node's parser has called the message complete (a body with a
 * Content-Length: the parser ends it there), as soon as it is whole, or never if the client goes before. To be called
 * from the request listener, before anything of the body has been read. False, and nothing done, for a request this
 * server did not make or whose body has begun to arrive: the caller leaves it to the routes.
 */
export function readWholeBody(req: IncomingMessage, done: (body: Buffer) => void): boolean {
  if (!(req instanceof EarlyIncomingMessage) || req.complete || req.readableLength > 0) return false;
  req[WHOLE_BODY] = { chunks: [], length: 0, done };
  return true;
}

/** Fastify's options that shape its own HTTP/1 server (fastify's lib/server.js), with the defaults it filled in. */
interface ServerOptions {
  http?: http.ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket?: number | null;
}

/** A serverFactory for Fastify; `early()` is read per request, as the app sets it once its routes are built. */
export function earlyAnswersServer(early: () => EarlyAnswers | undefined) {
  return (handler: Handler, fastifyOptions: Record<string, unknown>): http.Server => {
    const options = fastifyOptions as unknown as ServerOptions;
    const server = http.createServer({ ...options.http, IncomingMessage: EarlyIncomingMessage }, (req, res) => {
      const answers = early();
      if (answers) answers(req, res, handler);
      else handler(req, res);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket && options.maxRequestsPerSocket > 0)
      server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}
