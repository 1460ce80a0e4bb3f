// REST v0: the public welcome, then every resource of the registry (resources.ts) behind authentication,
// the rate limit and the response cache.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createAuthenticator } from './rest/authenticate.ts';
import { createLimiter, type Counter } from './rest/rate-limit.ts';
import { createResponseCache, type ResponseCache } from './rest/response-cache.ts';
import { ValidKeys } from './rest/key-cache.ts';
import type { Timers } from './rest/known-keys.ts';
import type { SharedChanges } from '../../changes/shared-changes.ts';
import { registerCors } from './rest/cors.ts';
import { RESOURCES } from './resources.ts';
import { searchRoute } from './search/search.routes.ts';
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

export interface ApiV0Options {
  /** What other instances changed (revocations, data versions), and how this one tells them. */
  changes: SharedChanges;
  /** Rate-limit and brute-force counts (shared through Redis when configured). */
  counter: Counter;
  cache: ResponseCache;
  /** The time in epoch milliseconds of the rate limit's and the brute-force guard's windows (tests fix it). */
  clock: () => number;
  /** The brute-force guard's memory of known keys: its time and waits (tests pass a fake). */
  timers?: Timers;
}

export async function apiV0(
  app: FastifyInstance,
  { changes, counter, cache, clock, timers }: ApiV0Options,
): Promise<void> {
  registerCors(app);
  // The welcome object is public: it sits outside the scope that authenticates.
  app.get('/', { schema: { hide: true, response: { 200: Welcome } } }, async () => ({
    name: 'OWASP community data API',
    version: 'v0',
    docs: '/api/v0/docs',
    openapi: '/api/v0/openapi.json',
    attribution: ATTRIBUTION,
  }));
  const validKeys = new ValidKeys();
  changes.onRevocation(() => validKeys.clear());
  await app.register(async (guarded) => {
    // One hook, in an order that matters: authenticate, then count against the limit, then (and
    // only then) the cache. Steps that need no I/O complete without an await.
    const { authenticate, recheck } = createAuthenticator(guarded, { counter, validKeys, clock, timers });
    const limit = createLimiter({
      limit: guarded.config.rateLimitPerSecond,
      counter,
      clock,
      // With Redis, each count also brings what other instances changed, so this one catches up before
      // it answers: keys revoked elsewhere (the request's key is asked about again) and data changed
      // elsewhere (the data version is read again, emptying the response cache, before the cache is consulted).
      watch: {
        keys: changes.watchedKeys,
        seen: (values, request) => {
          const { revoked, refreshing } = changes.noticed(values);
          const rechecking = revoked && request.apiKey !== undefined ? recheck(request) : undefined;
          if (rechecking || refreshing) return Promise.all([rechecking, refreshing]).then(() => {});
        },
      },
    });
    const fromCache = createResponseCache(guarded, cache, changes.dataVersion, guarded.config.responseCache);
    guarded.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const authenticating = authenticate(request);
      if (authenticating) await authenticating;
      const limiting = limit(request, reply);
      if (limiting) await limiting;
      if (fromCache(request, reply)) return reply;
    });
    await registerResources(guarded, RESOURCES);
    searchRoute(guarded);
  });
}
