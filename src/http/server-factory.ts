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

const prototypePush = IncomingMessage.prototype.push;

/**
 * Calls `done` with the request's whole body once Node's parser has called the message complete (a body with a
 * Content-Length: the parser ends it there), as soon as it is whole, or never if the client goes before. To be called
 * from the request listener, before anything of the body has been read. False, and nothing done, for a request whose
 * body has begun to arrive: the caller leaves it to the routes.
 *
 * Node's parser gives each part of a body to the message's `push`, and `push(null)` once it has called the message
 * complete. This request alone gets its own `push`, which keeps the parts instead of the stream's buffer, its
 * 'readable' ticks and the reads that empty it (a fifth of what a POST /mcp answered early cost, bench/POST-FLOOR.md);
 * the stream is still ended (`push(null)`), so it ends, is dumped and closes as one whose body was read. Every other
 * request is Node's own message, untouched. Not a subclass of IncomingMessage given to `http.createServer`: run
 * through tsx (`npm start`, the bench), a derived class gets its name redefined (esbuild's keepNames), and V8 then
 * gives up optimizing every function that constructs it, which here was Node's parser callback of every request
 * (docs/decisions.md, "no derived class on the hot path").
 */
export function readWholeBody(req: IncomingMessage, done: (body: Buffer) => void): boolean {
  if (req.complete || req.readableLength > 0 || Object.hasOwn(req, 'push')) return false;
  const chunks: Buffer[] = [];
  let length = 0;
  let ended = false;
  // (an arrow: a named function would get its name redefined by tsx at every request)
  req.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (ended) return prototypePush.call(req, chunk, encoding);
    if (chunk !== null) {
      const part = chunk as Buffer;
      chunks.push(part);
      length += part.length;
      return true;
    }
    ended = true;
    const more = prototypePush.call(req, null);
    done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
    return more;
  };
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
    const server = http.createServer(options.http ?? {}, (req, res) => {
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
