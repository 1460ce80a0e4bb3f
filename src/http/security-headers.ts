// Security headers. Every response of the service (API, GraphQL, errors, even the answers to
// malformed requests) gets the base set; an HTML answer also gets the fields only a rendered page uses (issue 46: a
// JSON answer carries no field its reader cannot use); the web pages and their static files add a content
// security policy. The pages have no inline script or style, which is what lets the policy forbid both.
import type { FastifyInstance } from 'fastify';

/** The headers of every response; HSTS only in production (served behind TLS). */
export function baseSecurityHeaders(production: boolean): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    ...(production ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

/**
 * The fields of a page: nothing of this service is meant to be framed (the pages also say so with frame-ancestors),
 * and a page's links send no referrer. A JSON, CSV or calendar answer is never rendered as a page (nosniff), has no
 * links to follow and nothing to click: these fields would only be bytes.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** At the root, before every route: the base set on every response, the page's fields on every HTML answer. */
export function registerBaseSecurityHeaders(app: FastifyInstance): void {
  const headers = baseSecurityHeaders(app.config.isProduction);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) {
      for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS))
        if (!reply.hasHeader(name)) reply.header(name, value);
    }
    done(null, payload);
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
