// The HTTP server Fastify listens with: the one Fastify would make itself (its timeouts and limits), whose request
// listener first offers each request to the early answers of cached hits (api/v0/rest/early-answers.ts). Requests
// made with app.inject() do not pass here: they go straight to Fastify's handler.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';

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
