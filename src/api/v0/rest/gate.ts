// The two steps every keyed read passes before it is answered: authenticate the X-API-Key, then count the request
// against the limit. One gate per app, shared by the REST scope (api/v0/index.ts, which then consults the response
// cache) and the MCP endpoint (src/mcp/), so that both know the same keys, the same revocations and the same counts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SharedChanges } from '../../../changes/shared-changes.ts';
import { createAuthenticator } from './authenticate.ts';
import { createLimiter, type Counter } from './rate-limit.ts';
import { ValidKeys } from './key-cache.ts';
import type { Timers } from './known-keys.ts';

export interface GateOptions {
  /** What other instances changed (revocations, data versions). */
  changes: SharedChanges;
  /** Rate-limit and brute-force counts (shared through Redis when configured). */
  counter: Counter;
  /** The time in epoch milliseconds of the rate limit's and the brute-force guard's windows (tests fix it). */
  clock: () => number;
  /** The brute-force guard's memory of known keys: its time and waits (tests pass a fake). */
  timers?: Timers | undefined;
}

/** Each step completes without an await when it needs no I/O (a remembered key, a local count). */
export interface Gate {
  /** REST_AUTH's rule for the request's X-API-Key: sets `request.apiKey`, or throws 401 (429 past the guard). */
  authenticate(request: FastifyRequest): void | Promise<void>;
  /** Counts the request (its key, else its address): sets the RateLimit headers, or throws 429. */
  limit(request: FastifyRequest, reply: FastifyReply): void | Promise<void>;
  /** Gives back the count of a request answered 304 (rate-limit.ts). */
  refund(request: FastifyRequest, reply: FastifyReply): void;
}

export function createGate(app: FastifyInstance, { changes, counter, clock, timers }: GateOptions): Gate {
  const validKeys = new ValidKeys();
  changes.onRevocation(() => validKeys.clear());
  const { authenticate, recheck } = createAuthenticator(app, { counter, validKeys, clock, timers });
  const limit = createLimiter({
    limit: app.config.rateLimitPerSecond,
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
  return { authenticate, limit, refund: limit.refund };
}
