// CORS for the read API (/api/v0/ only): any page may call it with an API key in X-API-Key, so the
// answers carry Access-Control-Allow-Origin (`*` by default, or the origins of CORS_ORIGINS) and
// preflights are answered. Never with credentials: the key is a header the page sends on purpose,
// cookies play no part. The signed-in routes (GraphQL, /auth/, /settings/) get none of it and stay
// same-origin.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const ALLOWED_METHODS = 'GET, HEAD';
const ALLOWED_HEADERS = 'X-API-Key, If-None-Match, Range, If-Range, X-Request-Id';
export const EXPOSED_HEADERS = [
  'Link',
  'ETag',
  // A dump's download resumed with Range, and its file name.
  'Content-Range',
  'Content-Disposition',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  // The IETF draft's fields, the key's expiry and the request id (issue 30).
  'RateLimit-Policy',
  'RateLimit',
  'API-Key-Expiration',
  'X-Request-Id',
  'Retry-After',
  // How often to poll the change log (GET /api/v0/changes/).
  'X-Poll-Interval',
].join(', ');
/** Access-Control-Allow-Origin when CORS_ORIGINS allows any origin (the default). */
export const ALLOW_ANY_ORIGIN = '*';
/** The fields of an answer to a request with an Origin when any origin may read it, as name, value pairs. */
export const CORS_FIELDS: readonly string[] = [
  'access-control-allow-origin',
  ALLOW_ANY_ORIGIN,
  'access-control-expose-headers',
  EXPOSED_HEADERS,
];
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const MAX_AGE_SECONDS = '7200';

export function registerCors(app: FastifyInstance): void {
  const origins = app.config.corsOrigins;
  const any = origins.includes('*');
  const allowed = new Set(origins);

  /** The Access-Control-Allow-Origin value for this request, if it comes from a page whose origin may read it. */
  const allowOrigin = (request: FastifyRequest): string | undefined => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string') return undefined;
    if (any) return ALLOW_ANY_ORIGIN;
    return allowed.has(origin) ? origin : undefined;
  };
  const common = (request: FastifyRequest, reply: FastifyReply): boolean => {
    // Only a page's request (it sends Origin) is given the fields a browser reads across origins: the answer depends
    // on the Origin header, and caches must keep them apart.
    reply.header('vary', 'Origin');
    const origin = allowOrigin(request);
    if (origin) reply.header('access-control-allow-origin', origin);
    return origin !== undefined;
  };

  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'OPTIONS' && common(request, reply))
      reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    done();
  });

  // Preflights, before authentication (a browser never sends the key with one).
  app.options('/*', { schema: { hide: true } }, async (request, reply) => {
    if (common(request, reply)) {
      reply.headers({
        'access-control-allow-methods': ALLOWED_METHODS,
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': MAX_AGE_SECONDS,
      });
    }
    return reply.code(204).header('allow', `${ALLOWED_METHODS}, OPTIONS`).send();
  });
}
