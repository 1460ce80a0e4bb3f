// Security headers. Every response of the service (API, GraphQL, errors, even the answers to
// malformed requests) gets the base set; the web pages and their static files add a content
// security policy. The pages have no inline script or style, which is what lets the policy forbid both.
import type { FastifyInstance } from 'fastify';

/** The headers of every response; HSTS only in production (served behind TLS). */
export function baseSecurityHeaders(production: boolean): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // Nothing of this service is meant to be framed (the pages also say so with frame-ancestors).
    'x-frame-options': 'DENY',
    ...(production ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

/** At the root, before every route: the base set on every response. */
export function registerBaseSecurityHeaders(app: FastifyInstance): void {
  const headers = baseSecurityHeaders(app.config.isProduction);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Avatars come from GitHub's image host.
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

// GraphiQL's page (outside production only): the same policy, except that its stylesheet embeds its fonts as
// data: URLs, which "default-src 'self'" would refuse.
export const GRAPHIQL_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace(
  "default-src 'self'",
  "default-src 'self'; font-src 'self' data:",
);

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.headers({
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
    });
  });
}
