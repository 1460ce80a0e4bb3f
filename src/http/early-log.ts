// The request log lines of an answer sent before Fastify (the early answers of REST and of /mcp): the two lines
// Fastify itself writes for each request at info and below, with the same fields.
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';

const REQUEST_LOG_LEVELS = new Set(['info', 'debug', 'trace']);

/** True when Fastify writes its two lines of each request (at info and below). */
export function requestLogs(log: FastifyBaseLogger): boolean {
  return REQUEST_LOG_LEVELS.has(log.level);
}

/** A request as Fastify's request log line describes it (its `req` serializer), the address the socket's. */
export function loggedRequest(req: IncomingMessage) {
  return {
    method: req.method,
    url: req.url,
    host: req.headers.host,
    remoteAddress: req.socket.remoteAddress,
    remotePort: req.socket.remotePort,
  };
}
