// REST v0: the public welcome, then every resource of the registry (resources.ts) behind authentication,
// the rate limit and the response cache.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createAuthenticator } from '../../plugins/rest-auth.ts';
import { createLimiter } from '../../plugins/rate-limit.ts';
import { createResponseCache } from '../../plugins/response-cache.ts';
import { registerCors } from '../../plugins/cors.ts';
import { RESOURCES } from './resources.ts';
import { registerResources } from './common/resource.ts';

const Welcome = Type.Object({
  name: Type.String(),
  version: Type.String(),
  docs: Type.String(),
  openapi: Type.String(),
  attribution: Type.String(),
});

export const ATTRIBUTION =
  'Community data © OWASP Foundation and the contributors to OWASP/owasp.github.io, used under CC BY-SA 4.0. ' +
  'Sample GitHub records recorded by the octokit/fixtures, octokit/octokit.rb and octokit/webhooks projects (MIT).';

export async function apiV0(app: FastifyInstance): Promise<void> {
  registerCors(app);
  // The welcome object is public: it sits outside the scope that authenticates.
  app.get('/', { schema: { hide: true, response: { 200: Welcome } } }, async () => ({
    name: 'OWASP community data API',
    version: 'v0',
    docs: '/api/v0/docs',
    openapi: '/api/v0/openapi.json',
    attribution: ATTRIBUTION,
  }));
  await app.register(async (guarded) => {
    // One hook, in an order that matters: authenticate, then count against the limit, then (and
    // only then) the cache. Steps that need no I/O complete without an await.
    const { authenticate, recheck } = createAuthenticator(guarded);
    const limit = createLimiter(guarded, guarded.shared.counter, recheck);
    const fromCache = createResponseCache(
      guarded,
      guarded.shared.cache,
      guarded.shared.watcher,
      guarded.config.responseCache,
    );
    guarded.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const authenticating = authenticate(request);
      if (authenticating) await authenticating;
      const limiting = limit(request, reply);
      if (limiting) await limiting;
      if (fromCache(request, reply)) return reply;
    });
    await registerResources(guarded, RESOURCES);
  });
}
