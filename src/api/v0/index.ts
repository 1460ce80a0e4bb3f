// REST v0: the public welcome, then every resource of the registry (resources.ts) behind authentication,
// the rate limit and the response cache.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createResponseCache, type ResponseCache } from './rest/response-cache.ts';
import type { Gate } from '../../access/gate.ts';
import { keyExpirationHeader } from '../../access/authenticate.ts';
import type { SharedChanges } from '../../announcements/heard.ts';
import { registerCors } from './rest/cors.ts';
import { checkOffered, JSON_TYPE } from '../../http/negotiate.ts';
import { registerEdgeHeaders } from './rest/edge-headers.ts';
import { RESOURCES } from './resources.ts';
import { searchRoute } from './search/search.routes.ts';
import { dumpsRoutes } from './dumps/dumps.routes.ts';
import { changesStreamRoute } from './changes/changes.stream.ts';
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
  'Sample GitHub records recorded by the octokit/fixtures, octokit/octokit.rb and octokit/webhooks projects (MIT). ' +
  'Coordinates of places from GeoNames (geonames.org, CC BY 4.0) and Natural Earth (public domain).';

export interface ApiV0Options {
  /** What other instances changed (data versions, which empty the response cache). */
  changes: SharedChanges;
  cache: ResponseCache;
  /** Authentication and the rate limit (src/access/gate.ts), shared with GraphQL, the MCP endpoint and secret scanning. */
  gate: Gate;
}

export async function apiV0(app: FastifyInstance, { changes, cache, gate }: ApiV0Options): Promise<void> {
  registerCors(app);
  // The welcome object is public: it sits outside the scope that authenticates.
  app.get('/', { schema: { hide: true, response: { 200: Welcome } }, config: { offers: [JSON_TYPE] } }, () => ({
    name: 'OWASP community data API',
    version: 'v0',
    docs: '/api/v0/docs',
    openapi: '/api/v0/openapi.json',
    attribution: ATTRIBUTION,
  }));
  await app.register(async (guarded) => {
    // One hook, in an order that matters: authenticate, then count against the limit, then (and
    // only then) the cache. Steps that need no I/O complete without an await.
    const { authenticate, limit } = gate;
    const fromCache = createResponseCache(guarded, cache, changes.dataVersion, guarded.config.responseCache);
    // Keyless reads public for the edge (REST_AUTH=optional, EDGE_MAX_AGE_S), after the cache set them private.
    registerEdgeHeaders(guarded, changes.dataVersion);
    guarded.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const authenticating = authenticate(request);
      if (authenticating) await authenticating;
      const limiting = limit(request, reply);
      if (limiting) await limiting;
      // JSON unless the route says otherwise: a `format` or Accept it cannot answer is refused, never JSON in disguise.
      const { mediaTypes, offers } = request.routeOptions.config;
      if (!mediaTypes && !offers) checkOffered(request);
      // The route's own headers (the change log's X-Poll-Interval), on its answers from the cache too.
      const own = request.routeOptions.config.headers;
      if (own) reply.headers(own);
      if (fromCache(request, reply)) return reply;
    });
    // After the cache's own onSend (which turns a matching 200 into a 304): a 304 gives its count back, and every
    // answer to a key says when the key expires.
    guarded.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode === 304) gate.refund(request, reply);
      keyExpirationHeader(request, reply);
      done(null, payload);
    });
    await registerResources(guarded, RESOURCES);
    searchRoute(guarded);
    dumpsRoutes(guarded);
    changesStreamRoute(guarded, { changes });
  });
}
