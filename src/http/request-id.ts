// X-Request-Id (issue 30; ASVS 16.2.1): each request has an id for support and correlation. A client's or a proxy's
// own is kept when it is plainly an id (1-128 characters of A-Z a-z 0-9 . _ -: nothing that could forge a log line or
// a header); otherwise one is made. It is echoed on every response, is the `reqId` of every log line of the request
// (Fastify's request logger), and is the error id of 5xx bodies and GraphQL errors.
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';
const PLAIN_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Fastify's genReqId: the request's own id when it is a plain one, else a new UUID. */
export function requestId(raw: IncomingMessage): string {
  return requestIdOf(raw.headers[REQUEST_ID_HEADER]);
}

/** The id of a request whose X-Request-Id header is `given` (undefined: none). */
export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && PLAIN_ID.test(given) ? given : crypto.randomUUID();
}

/** Echoes the id on every response: set first, so that errors, 404s, cached answers and GraphQL all carry it. */
export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
