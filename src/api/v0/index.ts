// REST v0: the explicit list of resources. Adding one is one folder and one line here.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createAuthenticator } from '../../plugins/rest-auth.ts';
import { createLimiter } from '../../plugins/rate-limit.ts';
import { createResponseCache } from '../../plugins/response-cache.ts';
import { registerCors } from '../../plugins/cors.ts';
import { chapterRoutes } from './chapters/chapters.routes.ts';
import { committeeRoutes } from './committees/committees.routes.ts';
import { deletedRoutes } from './deleted/deleted.routes.ts';
import { eventRoutes } from './events/events.routes.ts';
import { issueRoutes } from './issues/issues.routes.ts';
import { labelRoutes } from './labels/labels.routes.ts';
import { memberRoutes } from './members/members.routes.ts';
import { milestoneRoutes } from './milestones/milestones.routes.ts';
import { organizationRoutes } from './organizations/organizations.routes.ts';
import { projectRoutes } from './projects/projects.routes.ts';
import { releaseRoutes } from './releases/releases.routes.ts';
import { repositoryRoutes } from './repositories/repositories.routes.ts';
import { snapshotRoutes } from './snapshots/snapshots.routes.ts';
import { sponsorRoutes } from './sponsors/sponsors.routes.ts';

const resources = [
  chapterRoutes,
  committeeRoutes,
  deletedRoutes,
  eventRoutes,
  issueRoutes,
  labelRoutes,
  memberRoutes,
  milestoneRoutes,
  organizationRoutes,
  projectRoutes,
  releaseRoutes,
  repositoryRoutes,
  snapshotRoutes,
  sponsorRoutes,
];

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
    for (const resource of resources) await guarded.register(resource);
  });
}
