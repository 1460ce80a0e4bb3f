// Fixed one-second windows per API key (per client address when anonymous). With Redis the
// counters are shared by every instance (one atomic round trip); while Redis is unreachable each
// instance counts on its own, and the shared counters take over again when it returns.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '../errors.ts';
import { isReady } from '../redis.ts';

export interface Hit {
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

// INCR and set the expiry of a new window in one atomic step.
const INCREMENT = `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n`;

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

  /** Counts a hit; synchronous (no promise) when the count is local. */
  hit(key: string, windowMs: number, now = Date.now()): Hit | Promise<Hit> {
    const window = Math.floor(now / windowMs);
    const resetMs = (window + 1) * windowMs - now;
    if (isReady(this.redis)) {
      return (this.redis.eval(INCREMENT, 1, `${this.prefix}rl:${key}:${window}`, String(windowMs + 1000)) as Promise<number>).then(
        (count) => ({ count, resetMs }),
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

  /** The current count without adding to it (local view only when Redis is down). */
  async peek(key: string, windowMs: number, now = Date.now()): Promise<number> {
    const window = Math.floor(now / windowMs);
    if (isReady(this.redis)) {
      try {
        return Number((await this.redis.get(`${this.prefix}rl:${key}:${window}`)) ?? 0);
      } catch {
        // local view below
      }
    }
    const entry = this.local.get(key);
    return entry && entry.window === window ? entry.count : 0;
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

function identity(request: FastifyRequest): string {
  return request.apiKey ? `key:${request.apiKey.keyId}` : `ip:${request.ip}`;
}

/** The limiter of the REST scope; it runs after authentication, so keys are known. */
export function createLimiter(app: FastifyInstance, counter: Counter) {
  const limit = app.config.rateLimitPerSecond;
  const apply = ({ count, resetMs }: Hit, reply: FastifyReply) => {
    const headers = {
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': String(Math.max(0, limit - count)),
      'ratelimit-reset': String(Math.max(1, Math.ceil(resetMs / 1000))),
    };
    if (count > limit) throw new TooManyRequestsError(1, headers);
    reply.headers(headers);
  };
  return (request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    const hit = counter.hit(identity(request), 1000);
    if (hit instanceof Promise) return hit.then((h) => apply(h, reply));
    apply(hit, reply);
  };
}
