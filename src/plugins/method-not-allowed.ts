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

export function registerMethodNotAllowed(app: FastifyInstance): void {
  const routes = new Map<string, KnownRoute>();
  app.addHook('onRoute', (route) => {
    const key = route.url.replace(/\/+$/, '') || '/';
    const known = routes.get(key) ?? { pattern: toPattern(route.url), methods: new Set<string>() };
    for (const method of [route.method].flat()) known.methods.add(method);
    routes.set(key, known);
  });

  app.addHook('onRequest', async (request, reply) => {
    // Only requests the router could not place reach here with no route url.
    if (request.routeOptions.url !== undefined) return;
    const path = request.url.split('?')[0] ?? '';
    const allowed = new Set<string>();
    for (const route of routes.values()) {
      if (route.pattern.test(path)) for (const method of route.methods) allowed.add(method);
    }
    if (allowed.size === 0 || allowed.has(request.method)) return;
    return reply
      .code(405)
      .header('allow', [...allowed].sort().join(', '))
      .send({ message: 'Method not allowed' });
  });
}
