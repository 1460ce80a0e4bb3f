// OpenAPI 3.1 generated from the route schemas, served at /api/v0/openapi.json with Swagger UI at /api/v0/docs.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { VERSION } from '../version.ts';

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'OWASP community data API',
        version: VERSION,
        description:
          'Read-only REST API of the OWASP community data: chapters, committees, events, projects, sponsors, and the ' +
          'organizations, members, repositories, issues, labels, milestones and releases mirrored from GitHub. ' +
          'Authenticate with a personal API key in the `X-API-Key` header.',
        license: { name: 'Data: CC BY-SA 4.0 (OWASP) and MIT (GitHub samples)', url: 'https://creativecommons.org/licenses/by-sa/4.0/' },
      },
      components: {
        securitySchemes: { ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      },
      security: [{ ApiKeyAuth: [] }],
    },
    // Only the REST operations belong to the document.
    transform: ({ schema, url }) => ({
      schema: (url.startsWith('/api/v0/') && url !== '/api/v0/' ? schema : { ...schema, hide: true }) as typeof schema,
      url,
    }),
  });
  await app.register(swaggerUi, { routePrefix: '/api/v0/docs', uiConfig: { deepLinking: true } });
  app.get('/api/v0/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
