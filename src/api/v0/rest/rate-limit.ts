// Fixed one-second windows per API key (per client address when anonymous). With Redis the
// counters are shared by every instance (one atomic round trip); while Redis is unreachable each
// instance counts on its own, and the shared counters take over again when it returns.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '../../../errors.ts';
import { isReady } from '../../../redis.ts';

export interface Hit {
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
  /** The values of the watched keys, read in the same round trip; absent when counted locally. */
  watched?: (string | null)[];
}

// INCR and set the expiry of a new window in one atomic step; with more keys, also read them.
const INCREMENT =
  `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end ` +
  `if #KEYS == 1 then return n end local r = {n} for i = 2, #KEYS do r[i] = redis.call('GET', KEYS[i]) end return r`;

// DECR only a window that still exists, so that no key is left without an expiry.
const DECREMENT = `if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end return 0`;

export class Counter {
  private local = new Map<string, { window: number; count: number }>();
  private sweeps = 0;

  constructor(
    private readonly redis: Redis | undefined,
    private readonly prefix = 'cds:',
  ) {}

  /** True while counts go to Redis (shared by every instance); false when local. */
  get shared(): boolean {
    return isReady(this.redis);
  }

  /**
   * Counts a hit; synchronous (no promise) when the count is local. `watch` names Redis keys
   * whose values come back with the count.
   */
  hit(key: string, windowMs: number, now = Date.now(), watch: readonly string[] = []): Hit | Promise<Hit> {
    const window = Math.floor(now / windowMs);
    const resetMs = (window + 1) * windowMs - now;
    if (isReady(this.redis)) {
      const counted = `${this.prefix}rl:${key}:${window}`;
      // One key: the count; more: the count followed by their values.
      const counting = this.redis.eval(
        INCREMENT,
        1 + watch.length,
        counted,
        ...watch,
        String(windowMs + 1000),
      ) as Promise<number | [number, ...(string | null)[]]>;
      return counting.then(
        (reply): Hit =>
          typeof reply === 'number'
            ? { count: reply, resetMs }
            : { count: reply[0], resetMs, watched: reply.slice(1) as (string | null)[] },
        () => this.localHit(key, window, resetMs),
      );
    }
    return this.localHit(key, window, resetMs);
  }

  private localHit(key: string, window: number, resetMs: number): Hit {
    const entry = this.local.get(key);
    const count = entry && entry.window === window ? entry.count + 1 : 1;
    this.local.set(key, { window, count });
    if (++this.sweeps % 10_000 === 0) this.sweep(window);
    return { count, resetMs };
  }

  /** Takes back a hit of the current window (a valid key is no failure); best effort. */
  undo(key: string, windowMs: number, now = Date.now()): void {
    const window = Math.floor(now / windowMs);
    if (isReady(this.redis)) {
      this.redis.eval(DECREMENT, 1, `${this.prefix}rl:${key}:${window}`).catch(() => {});
      return;
    }
    const entry = this.local.get(key);
    if (entry && entry.window === window && entry.count > 0) entry.count--;
  }

  private sweep(window: number): void {
    for (const [key, entry] of this.local) if (entry.window < window - 60) this.local.delete(key);
  }
}

export class TooManyRequestsError extends AppError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, { detail: 'Too many requests.' }, { ...headers, 'retry-after': String(retryAfterSeconds) });
  }
}

function keyOrAddress(request: FastifyRequest): string {
  return request.apiKey ? `key:${request.apiKey.keyId}` : `ip:${request.ip}`;
}

/** Redis keys read in the same round trip as each count, and what to do with their values. */
export interface Watch {
  keys: readonly string[];
  /** The values read with a count (in the order of `keys`); a promise when the request must wait for what they tell. */
  seen(values: readonly (string | null)[], request: FastifyRequest): void | Promise<void>;
}

export interface LimiterOptions {
  /** Requests per second per key (per client address when anonymous). */
  limit: number;
  counter: Counter;
  /** With Redis, the count's round trip also reads these keys (SharedChanges: what other instances changed). */
  watch?: Watch;
  clock?: () => number;
  /** What is counted: by default the request's API key, or its client address when it has none. */
  identity?: (request: FastifyRequest) => string;
}

/**
 * The limiter of the REST scope; it runs after authentication, so keys are known. It counts and
 * answers 429 past the limit; the values of the watched keys go to `watch.seen`, and the answer
 * waits for what it returns.
 */
export function createLimiter({ limit, counter, watch, clock = Date.now, identity = keyOrAddress }: LimiterOptions) {
  const watched = watch?.keys ?? [];
  const apply = ({ count, resetMs }: Hit, reply: FastifyReply) => {
    const headers = {
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': String(Math.max(0, limit - count)),
      'ratelimit-reset': String(Math.max(1, Math.ceil(resetMs / 1000))),
    };
    if (count > limit) throw new TooManyRequestsError(1, headers);
    reply.headers(headers);
  };
  const settle = (hit: Hit, request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    const waiting = hit.watched && watch ? watch.seen(hit.watched, request) : undefined;
    if (waiting) return waiting.then(() => apply(hit, reply));
    apply(hit, reply);
  };
  return (request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    const hit = counter.hit(identity(request), 1000, clock(), watched);
    if (hit instanceof Promise) return hit.then((h) => settle(h, request, reply));
    apply(hit, reply);
  };
}
