// A known path asked with a method it does not serve gets 405 with `Allow`, not 404.
import type { FastifyInstance } from 'fastify';

interface KnownRoute {
  pattern: RegExp;
  methods: Set<string>;
}

function toPattern(url: string): RegExp {
  const body = url
    .replace(/\/+$/, '')
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

/**
 * Records every route; the returned function, called by the not-found handler (so it costs nothing
 * on matched requests), tells which methods a path allows when the one asked is not among them.
 */
export function registerMethodNotAllowed(app: FastifyInstance): (path: string, method: string) => string | undefined {
  const routes = new Map<string, KnownRoute>();
  app.addHook('onRoute', (route) => {
    const key = route.url.replace(/\/+$/, '') || '/';
    const known = routes.get(key) ?? { pattern: toPattern(route.url), methods: new Set<string>() };
    for (const method of [route.method].flat()) known.methods.add(method);
    routes.set(key, known);
  });

  return (path: string, method: string): string | undefined => {
    const allowed = new Set<string>();
    for (const route of routes.values()) {
      if (route.pattern.test(path)) for (const known of route.methods) allowed.add(known);
    }
    // A path only the CORS preflight route (OPTIONS /api/v0/*) matches is unknown: 404, not 405.
    const onlyPreflight = allowed.size === 1 && allowed.has('OPTIONS');
    return allowed.size === 0 || onlyPreflight || allowed.has(method) ? undefined : [...allowed].sort().join(', ');
  };
}
