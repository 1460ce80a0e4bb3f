// The web pages: the landing page, the map, API key management, GraphiQL (outside production), their static files,
// and the keyless documents (the map's data, the calendar feed, the health badges).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerSecurityHeaders } from '../http/security-headers.ts';
import { staticRoutes } from './static.ts';
import { graphiqlRoutes } from './graphiql.ts';
import { landingPage } from './landing.page.ts';
import { apiKeysPage } from './api-keys.page.ts';
import { mapPage } from './map.page.ts';
import { mapDataRoutes } from './map.data.ts';
import { healthDocument } from './health.data.ts';
import { healthPage, type HealthQuery } from './health.page.ts';
import { PROJECT_LEVELS } from '../api/v0/projects/projects.schemas.ts';
import { calendarRoutes } from './calendar.data.ts';
import { badgeRoutes } from './badges.ts';
import { vendorRoutes } from './vendor.ts';

const HTML = 'text/html; charset=utf-8';

function origin(app: FastifyInstance, request: FastifyRequest): string {
  return app.config.publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`;
}

export async function webRoutes(app: FastifyInstance): Promise<void> {
  // Registered without fastify-plugin, so these headers stay on the pages and never reach the API.
  registerSecurityHeaders(app);
  await app.register(staticRoutes);
  if (!app.config.isProduction) await app.register(graphiqlRoutes);
  await app.register(vendorRoutes);
  await app.register(mapDataRoutes);
  await app.register(calendarRoutes);
  await app.register(badgeRoutes);

  app.get('/', { schema: { hide: true }, config: { offers: ['text/html'] } }, async (request, reply) =>
    reply
      .type(HTML)
      .header('cache-control', 'public, max-age=300')
      .send(
        landingPage(origin(app, request), docsOf(app), {
          github: Boolean(app.config.github.clientId && app.config.github.clientSecret),
          devLogin: app.config.authDevLogin,
        }),
      ),
  );

  app.get('/map', { schema: { hide: true }, config: { offers: ['text/html'] } }, async (_request, reply) =>
    reply.type(HTML).header('cache-control', 'public, max-age=300').send(mapPage()),
  );

  // Keyless like /map: the page is built from its daily document (health.data.ts). Unknown values are no filter.
  const health = healthDocument(app);
  app.get('/health', { schema: { hide: true }, config: { offers: ['text/html'] } }, async (request, reply) => {
    const raw = request.query as Record<string, unknown>;
    const text = (name: string, max: number) => {
      const value = raw[name];
      return typeof value === 'string' && value.trim() !== '' && !value.includes('\u0000')
        ? value.trim().slice(0, max)
        : undefined;
    };
    const level = text('level', 20)?.toLowerCase();
    const query: HealthQuery = {
      ...(level && (PROJECT_LEVELS as readonly string[]).includes(level) ? { level } : {}),
      ...(text('q', 100) ? { q: text('q', 100)! } : {}),
      ...(text('project', 200) ? { project: text('project', 200)!.toLowerCase() } : {}),
    };
    return reply
      .type(HTML)
      .header('cache-control', 'public, max-age=300')
      .send(healthPage(await health(), query));
  });

  app.get(
    '/settings/api-keys',
    { schema: { hide: true }, config: { offers: ['text/html'] } },
    async (request, reply) => {
      const user = await request.sessionUser();
      // Personal: never kept by any cache.
      return reply
        .type(HTML)
        .header('cache-control', 'no-store')
        .send(
          apiKeysPage(user, {
            devLogin: app.config.authDevLogin,
            github: Boolean(app.config.github.clientId && app.config.github.clientSecret),
          }),
        );
    },
  );
}

/**
 * The address of a resource's list in the API docs: Swagger UI's deep link to the operation (`#/<tag>/<operationId>`,
 * as the OpenAPI document tags it), else the docs' page.
 */
function docsOf(app: FastifyInstance): (name: string) => string {
  const doc = app.swagger() as { paths?: Record<string, { get?: { operationId?: string; tags?: string[] } }> };
  return (name) => {
    const operation = doc.paths?.[`/api/v0/${name}/`]?.get;
    const tag = operation?.tags?.[0];
    return tag && operation.operationId
      ? `/api/v0/docs#/${encodeURIComponent(tag.replaceAll(' ', '_'))}/${encodeURIComponent(operation.operationId)}`
      : '/api/v0/docs';
  };
}
