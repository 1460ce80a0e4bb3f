// Fixed one-second windows per API key (per client address when anonymous). With Redis the
// counters are shared by every instance (one atomic round trip); while Redis cannot be used each
// instance counts on its own, and the shared counters take over again when it can (shared-counting.ts).
// What a client controls is bounded (issue 25): the counted text (an address that is not one, such as 8 kB of
// X-Forwarded-For behind TRUST_PROXY, counts as one shared "address"; a longer key is counted by its digest) and the
// number of local counts (MAX_LOCAL_ENTRIES, the least recently started out first).
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../errors.ts';
import type { RedisClient } from '../redis.ts';
import { SharedCounting } from './shared-counting.ts';

export interface Hit {
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
  /** The values of the watched keys, read in the same round trip; absent when counted locally. */
  watched?: (string | null)[];
}

// INCR and set the expiry of a new window in one atomic step; with more keys, also read them. (On a cluster every
// key carries one hash tag, redis.ts' redisKeyPrefix, so that they are in one slot.)
const INCREMENT =
  `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end ` +
  `if #KEYS == 1 then return n end local r = {n} for i = 2, #KEYS do r[i] = redis.call('GET', KEYS[i]) end return r`;

// DECR only a window that still exists, so that no key is left without an expiry.
const DECREMENT = `if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end return 0`;

/** Local counts kept at most: ~10 MB of keys and entries. Past it the least recently started go first (Counter). */
export const MAX_LOCAL_ENTRIES = 50_000;
/** The longest key counted as it is; a longer one is counted by its digest. */
const MAX_KEY_LENGTH = 100;

/** What stands for a client address that is not an IP address (only a misconfigured or hostile proxy sends one). */
export const UNPARSEABLE_ADDRESS = 'unparseable';

/** The request's client address as counted: the address, or UNPARSEABLE_ADDRESS for anything else. */
export function clientAddress(request: FastifyRequest): string {
  const ip = request.ip;
  return ip.length <= 45 && net.isIP(ip) !== 0 ? ip : UNPARSEABLE_ADDRESS;
}

function boundedKey(key: string): string {
  if (key.length <= MAX_KEY_LENGTH) return key;
  return `${key.slice(0, 20)}#${crypto.createHash('sha256').update(key).digest('base64url')}`;
}

interface LocalCount {
  window: number;
  count: number;
}

export interface CounterOptions {
  /** Of every Redis key (redisKeyPrefix). */
  prefix?: string;
  maxEntries?: number;
  /** Where the fallback to local counts is reported, when it starts and when it ends. */
  log?: FastifyBaseLogger;
}

export class Counter {
  /**
   * Local counts in two generations: new ones go to `current`; when it holds half the bound it becomes `previous`,
   * and the counts of the old `previous` (the least recently started) are dropped together. A count found in
   * `previous` moves back to `current`. (Not one Map whose oldest entry is deleted one by one: V8 keeps deleted
   * entries as holes that each look for the oldest walks again, ~15 µs a hit with 50,000 addresses.)
   */
  private current = new Map<string, LocalCount>();
  private previous = new Map<string, LocalCount>();
  private readonly sharing: SharedCounting;
  /** The keys the last count read: the probe reads them too, so that it fails as the counts would (CROSSSLOT). */
  private watched: readonly string[] = [];
  private readonly prefix: string;
  private readonly maxEntries: number;

  constructor(
    private readonly redis: RedisClient | undefined,
    { prefix = 'cds:', maxEntries = MAX_LOCAL_ENTRIES, log }: CounterOptions = {},
  ) {
    this.prefix = prefix;
    this.maxEntries = maxEntries;
    this.sharing = new SharedCounting(redis, log, () =>
      this.redis!.eval(INCREMENT, 1 + this.watched.length, `${this.prefix}rl:probe`, ...this.watched, '1000'),
    );
  }

  /** Local counts held (the bound of MAX_LOCAL_ENTRIES). */
  get localSize(): number {
    return this.current.size + this.previous.size;
  }

  /** True while counts go to Redis (shared by every instance); false when local. */
  get shared(): boolean {
    return this.sharing.shared;
  }

  /** The app is closing: its disconnect from Redis is no fallback to log. */
  close(): void {
    this.sharing.close();
  }

  /**
   * Counts a hit; synchronous (no promise) when the count is local. `watch` names Redis keys
   * whose values come back with the count.
   */
  hit(key: string, windowMs: number, now = Date.now(), watch: readonly string[] = []): Hit | Promise<Hit> {
    key = boundedKey(key);
    const window = Math.floor(now / windowMs);
    const resetMs = (window + 1) * windowMs - now;
    if (this.redis && this.sharing.shared) {
      const counted = `${this.prefix}rl:${key}:${window}`;
      const generation = this.sharing.generation;
      if (watch.length > 0) this.watched = watch;
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
        (error: unknown) => {
          this.sharing.failed(error, generation);
          return this.localHit(key, window, windowMs, now);
        },
      );
    }
    return this.localHit(key, window, windowMs, now);
  }

  private localHit(key: string, window: number, windowMs: number, now: number): Hit {
    const resetMs = (window + 1) * windowMs - now;
    let entry = this.current.get(key);
    if (!entry) {
      entry = this.previous.get(key);
      if (entry) this.previous.delete(key);
      else entry = { window, count: 0 };
      if (this.current.size >= this.maxEntries / 2) {
        this.previous = this.current;
        this.current = new Map();
      }
      this.current.set(key, entry);
    }
    if (entry.window !== window) {
      entry.window = window;
      entry.count = 0;
    }
    entry.count++;
    return { count: entry.count, resetMs };
  }

  /** Takes back a hit of the current window (a valid key is no failure); best effort. */
  undo(key: string, windowMs: number, now = Date.now()): void {
    key = boundedKey(key);
    const window = Math.floor(now / windowMs);
    if (this.redis && this.sharing.shared) {
      this.redis.eval(DECREMENT, 1, `${this.prefix}rl:${key}:${window}`).catch(() => {});
      return;
    }
    const entry = this.current.get(key) ?? this.previous.get(key);
    if (entry && entry.window === window && entry.count > 0) entry.count--;
  }
}

/** What the requests of a key are counted as. */
export function keyCounted(keyId: string): string {
  return `key:${keyId}`;
}

function keyOrAddress(request: FastifyRequest): string {
  return request.apiKey ? keyCounted(request.apiKey.keyId) : `ip:${clientAddress(request)}`;
}

/**
 * Which spellings of the limit an answer carries (RATE_LIMIT_HEADERS): `legacy` RateLimit-Limit, -Remaining and -Reset
 * (what existing clients read), `draft` the IETF draft's RateLimit-Policy and RateLimit, `both` (the default) all five.
 */
export type RateLimitFields = 'both' | 'draft' | 'legacy';

/** The limit's fields that are the same on every answer (the limit, the policy), as name, value pairs. */
export function fixedLimitFields(fields: RateLimitFields, limit: number, policy: string): string[] {
  const legacy = fields === 'draft' ? [] : ['ratelimit-limit', String(limit)];
  return fields === 'legacy' ? legacy : [...legacy, 'ratelimit-policy', policy];
}

/** Appends the limit's fields of one answer (what is left, when the window ends) to `headers`, name then value. */
export function pushLimitState(
  headers: (string | number)[],
  fields: RateLimitFields,
  limit: number,
  count: number,
  resetMs: number,
): void {
  const at = headers.length;
  if (fields !== 'draft') headers.push('ratelimit-remaining', '', 'ratelimit-reset', '');
  if (fields !== 'legacy') headers.push('ratelimit', '');
  setLimitState(headers, at, fields, limit, count, resetMs);
}

/**
 * Writes the values of the fields pushLimitState put at `at` (their names stay) for another count: an answer whose
 * header array is kept and filled again by each request (the early answers of cached hits) allocates no array.
 */
export function setLimitState(
  headers: (string | number)[],
  at: number,
  fields: RateLimitFields,
  limit: number,
  count: number,
  resetMs: number,
): void {
  const { remaining, reset, state } = limitState(limit, count, resetMs);
  if (fields !== 'draft') {
    headers[at + 1] = remaining;
    headers[at + 3] = reset;
    at += 4;
  }
  if (fields !== 'legacy') headers[at + 1] = state;
}

/** A count's state as the RateLimit fields say it: requests left, seconds to the window's end, the draft's field. */
export function limitState(limit: number, count: number, resetMs: number) {
  const remaining = String(Math.max(0, limit - count));
  const reset = String(Math.max(1, Math.ceil(resetMs / 1000)));
  return { remaining, reset, state: `"default";r=${remaining};t=${reset}` };
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
  /** The spellings of the limit the answers carry (RATE_LIMIT_HEADERS); both by default. */
  fields?: RateLimitFields;
}

/** The window of every limit: one second (the `w` of RateLimit-Policy). */
const WINDOW_MS = 1000;

/** What a request was counted as, so that a 304 can give its count back. */
export interface Counted {
  key: string;
  now: number;
  hit: Hit;
}

/**
 * The limiter of the REST scope; it runs after authentication, so keys are known. It counts and
 * answers 429 past the limit; the values of the watched keys go to `watch.seen`, and the answer
 * waits for what it returns. `refund` gives a request's count back (a 304: issue 30, a client that
 * polls with ETags spends nothing while nothing changed; it still needed a valid key and a place
 * under the limit to be answered). `countKey` and `handOver` serve the early answer of cached hits
 * (early-answers.ts): it counts a remembered key itself, and a request it then leaves to the routes carries that
 * count, so that the limiter does not count it twice.
 */
export function createLimiter({
  limit,
  counter,
  watch,
  clock = Date.now,
  identity = keyOrAddress,
  fields = 'both',
}: LimiterOptions) {
  const watched = watch?.keys ?? [];
  // draft-ietf-httpapi-ratelimit-headers: the policy (quota q per window of w seconds) and the state (r left, t
  // seconds to the window's end), beside the older RateLimit-Limit/-Remaining/-Reset that existing clients read.
  const policy = `"default";q=${limit};w=${WINDOW_MS / 1000}`;
  // The same fields as the early answers send (fixedLimitFields, pushLimitState): one rule for RATE_LIMIT_HEADERS.
  const fixed = fixedLimitFields(fields, limit, policy);
  const headersOf = (count: number, resetMs: number): Record<string, string> => {
    const pairs: (string | number)[] = fixed.slice();
    pushLimitState(pairs, fields, limit, count, resetMs);
    const headers: Record<string, string> = {};
    for (let i = 0; i < pairs.length; i += 2) headers[pairs[i] as string] = String(pairs[i + 1]);
    return headers;
  };
  const counted = new WeakMap<FastifyRequest, Counted>();
  // Requests the early answer counted and then left to the routes (a count past the limit, a key or a cache entry
  // that a change it learned of with the count made it doubt).
  const handedOver = new WeakMap<IncomingMessage, Counted>();
  const apply = (entry: Counted, request: FastifyRequest, reply: FastifyReply) => {
    const headers = headersOf(entry.hit.count, entry.hit.resetMs);
    if (entry.hit.count > limit) throw new TooManyRequestsError(1, headers);
    counted.set(request, entry);
    reply.headers(headers);
  };
  const settle = (entry: Counted, request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    const waiting = entry.hit.watched && watch ? watch.seen(entry.hit.watched, request) : undefined;
    if (waiting) return waiting.then(() => apply(entry, request, reply));
    apply(entry, request, reply);
  };
  const count = (request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    const key = identity(request);
    const early = handedOver.get(request.raw);
    if (early !== undefined) {
      handedOver.delete(request.raw);
      // What the count brought was taken in by the early answer; the same key is not counted again.
      if (early.key === key) return apply(early, request, reply);
    }
    const now = clock();
    const hit = counter.hit(key, WINDOW_MS, now, watched);
    if (hit instanceof Promise) return hit.then((h) => settle({ key, now, hit: h }, request, reply));
    apply({ key, now, hit }, request, reply);
  };
  /** Gives back the count of a request answered 304, and says so in its headers. */
  const refund = (request: FastifyRequest, reply: FastifyReply): void => {
    const entry = counted.get(request);
    if (!entry) return;
    counted.delete(request);
    counter.undo(entry.key, WINDOW_MS, entry.now);
    reply.headers(headersOf(entry.hit.count - 1, entry.hit.resetMs));
  };
  /** Counts a request of a remembered key (`key:<id>`), as `count` would; synchronous when counted locally. */
  const countKey = (key: string): Counted | Promise<Counted> => {
    const now = clock();
    const hit = counter.hit(key, WINDOW_MS, now, watched);
    return hit instanceof Promise ? hit.then((h) => ({ key, now, hit: h })) : { key, now, hit };
  };
  /** The request goes on to the routes with this count: the limiter applies it instead of counting again. */
  const handOver = (raw: IncomingMessage, entry: Counted): void => {
    handedOver.set(raw, entry);
  };
  return Object.assign(count, { refund, countKey, handOver, limit, policy, fields });
}
