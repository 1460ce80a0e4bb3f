// The two steps every keyed read passes before it is answered: authenticate the X-API-Key, then count the request
// against the limit. One gate per app, shared by the REST scope (api/v0/index.ts, which then consults the response
// cache) and the MCP endpoint (src/mcp/), so that both know the same keys, the same revocations and the same counts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SharedChanges } from '../announcements/heard.ts';
import { createAuthenticator } from './authenticate.ts';
import type { IncomingMessage } from 'node:http';
import { createLimiter, keyCounted, type Counted, type Counter, type RateLimitFields } from './rate-limit.ts';
import type { KeyIdentity } from '../api-keys/api-keys.service.ts';
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
  /** The same steps for the early answer of cached hits (early-answers.ts), on the raw request. */
  early: EarlyGate;
}

/** A remembered key is the early answer's only way in; everything else goes to the routes and the hooks above. */
export interface EarlyGate {
  /** The identity of an X-API-Key remembered as valid (no I/O), else undefined. */
  remembered(header: string): KeyIdentity | undefined;
  /** Records the key's use (lastUsedAt), as authenticate does. */
  used(identity: KeyIdentity): void;
  /**
   * Counts the request against its key's limit. With Redis, what the count brought back is taken in first (a
   * revocation elsewhere empties the memory of keys, a data change elsewhere is read, emptying the response cache):
   * `changed` then says that the key and the cache entry must be looked at again.
   */
  count(identity: KeyIdentity): Counted | Promise<{ counted: Counted; changed: boolean }>;
  /** Leaves the request to the routes with its count (rate-limit.ts' handOver). */
  handOver(raw: IncomingMessage, counted: Counted): void;
  /** The limit (RATE_LIMIT_PER_SECOND), its RateLimit-Policy, and the spellings answers carry (RATE_LIMIT_HEADERS). */
  limit: number;
  policy: string;
  fields: RateLimitFields;
}

export function createGate(app: FastifyInstance, { changes, counter, clock, timers }: GateOptions): Gate {
  const validKeys = new ValidKeys();
  changes.onRevocation(() => validKeys.clear());
  const { authenticate, recheck, recordUse } = createAuthenticator(app, { counter, validKeys, clock, timers });
  const limit = createLimiter({
    limit: app.config.rateLimitPerSecond,
    fields: app.config.rateLimitHeaders,
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
  // What a remembered identity is counted as, made once: not a new string to hash on every early answer.
  const countedAs = new WeakMap<KeyIdentity, string>();
  const early: EarlyGate = {
    remembered: (header) => validKeys.get(header, clock()),
    used: recordUse,
    count(identity) {
      let key = countedAs.get(identity);
      if (key === undefined) countedAs.set(identity, (key = keyCounted(identity.keyId)));
      const counting = limit.countKey(key);
      if (!(counting instanceof Promise)) return counting;
      return counting.then(async (counted) => {
        if (!counted.hit.watched) return { counted, changed: false };
        const { revoked, refreshing } = changes.noticed(counted.hit.watched);
        // A data version that could not be read is a change too: the routes answer (as they would have).
        if (refreshing) await refreshing.catch(() => {});
        return { counted, changed: revoked || refreshing !== undefined };
      });
    },
    handOver: limit.handOver,
    limit: limit.limit,
    policy: limit.policy,
    fields: limit.fields,
  };
  return { authenticate, limit, refund: limit.refund, early };
}
