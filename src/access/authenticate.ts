// X-API-Key authentication of the REST operations. REST_AUTH=required: no key → 401;
// optional: no key is served anonymously, but a key that is present must be valid.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TooManyRequestsError, UnauthorizedError } from '../errors.ts';
import { authenticateApiKey, type KeyIdentity } from '../api-keys/api-keys.service.ts';
import { LastUsedRecorder } from './last-used.ts';
import { clientAddress, type Counter } from './rate-limit.ts';
import { CountSketch } from './count-sketch.ts';
import { KnownKeys, REAL_TIMERS, type Timers } from './known-keys.ts';
import type { ValidKeys } from './key-cache.ts';
import { isWellFormedApiKey } from '../api-keys/api-keys.format.ts';

const FAILURE_WINDOW_MS = 60_000;

/**
 * The authentication step of the REST scope. A key remembered as valid is accepted without any
 * await; anything else is checked. `recheck` asks the database again about a request's key (the
 * limiter calls it when another instance has revoked a key since the memory was filled).
 */
export interface AuthenticatorOptions {
  /** The brute-force guard's counts (shared through Redis when configured). */
  counter: Counter;
  /** The memory of keys found valid. */
  validKeys: ValidKeys;
  /** The app's time in epoch milliseconds: the brute-force guard's windows, and keys' expiry. */
  clock: () => number;
  /** The known-keys memory's and the lastUsedAt batches' time and waits (tests pass a fake). */
  timers?: Timers;
}

export function createAuthenticator(
  app: FastifyInstance,
  { counter, validKeys, clock, timers = REAL_TIMERS }: AuthenticatorOptions,
) {
  const recorder = new LastUsedRecorder(
    app.database.db,
    (error) => app.log.warn({ err: error }, 'lastUsedAt not recorded'),
    (ms) => timers.sleep(ms),
  );
  app.addHook('onClose', () => recorder.flush());

  const knownKeys = new KnownKeys(app.database.db, clock, timers);
  // This instance's own counts, in a fixed amount of memory that never forgets an address (count-sketch.ts).
  const ownCounts = new CountSketch();
  const lookup = (header: unknown) =>
    typeof header === 'string'
      ? authenticateApiKey(app.database.db, header.trim(), validKeys, new Date(clock()))
      : null;

  // Brute-force guard, per client address (the real one behind TRUST_PROXY). Each attempt is
  // counted before the key is looked up, in one atomic step (locally, or INCR in Redis), so that
  // concurrent wrong keys cannot all slip under the limit. Past the limit, a key is looked up only
  // when it may be valid (known-keys.ts): wrong keys get 429 without reaching the database, and a
  // valid key is served whatever others at the same address sent. A valid key takes its count back.
  async function check(request: FastifyRequest, header: unknown): Promise<void> {
    const arrivedAt = timers.now();
    const now = clock();
    const failures = `auth-fail:${clientAddress(request)}`;
    const counted = counter.hit(failures, FAILURE_WINDOW_MS, now);
    // Counted here too: a Redis command that times out falls back to a local count, which must
    // then include the attempts already counted in Redis (the higher count wins).
    const here = ownCounts.hit(failures, FAILURE_WINDOW_MS, now);
    const count = Math.max(here.count, (await counted).count);
    const overLimit = count > app.config.authFailuresPerMinute;
    const raw = typeof header === 'string' ? header.trim() : '';
    const identity =
      !overLimit || (isWellFormedApiKey(raw) && (await knownKeys.mayBeValid(raw, arrivedAt)))
        ? await lookup(header)
        : null;
    if (!identity) {
      if (overLimit) throw new TooManyRequestsError(Math.ceil(FAILURE_WINDOW_MS / 1000));
      throw new UnauthorizedError();
    }
    counter.undo(failures, FAILURE_WINDOW_MS, now);
    ownCounts.undo(failures, FAILURE_WINDOW_MS, now);
    request.apiKey = identity;
    recorder.record(identity.keyId);
  }

  async function recheck(request: FastifyRequest): Promise<void> {
    const identity = await lookup(request.headers['x-api-key']);
    if (!identity) throw new UnauthorizedError();
    request.apiKey = identity;
  }

  const authenticate = (request: FastifyRequest): void | Promise<void> => {
    const header = request.headers['x-api-key'];
    if (header === undefined) {
      if (app.config.restAuth === 'optional') return;
      throw new UnauthorizedError();
    }
    const known = typeof header === 'string' ? validKeys.get(header, clock()) : undefined;
    if (!known) return check(request, header);
    request.apiKey = known;
    recorder.record(known.keyId);
  };
  /** A remembered key's use, as `authenticate` records it (the early answer's, early-answers.ts). */
  const recordUse = (identity: KeyIdentity): void => recorder.record(identity.keyId);
  return { authenticate, recheck, recordUse };
}

/**
 * API-Key-Expiration (issue 30, as GitHub tells a token's expiry): every response a key authenticated says when that
 * key expires, so that clients learn it before their calls start failing. RFC 3339 in UTC, whole seconds (rounded
 * down: never later than the real expiry). Set as the answer is sent, so that it is the key's latest expiry (a
 * rotation elsewhere shortens it) on every kind of answer: built, cached, 304, HEAD, an error.
 */
export function keyExpirationHeader(request: FastifyRequest, reply: FastifyReply): void {
  const key = request.apiKey;
  if (key) reply.header('api-key-expiration', keyExpiration(key));
}

// Formatted once per identity (a remembered key's identity is one object for as long as it is remembered).
const expirations = new WeakMap<KeyIdentity, string>();

/** The API-Key-Expiration value of a key. */
export function keyExpiration(identity: KeyIdentity): string {
  let value = expirations.get(identity);
  if (value === undefined) {
    value = `${identity.expiresAt.toISOString().slice(0, 19)}Z`;
    expirations.set(identity, value);
  }
  return value;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key the request authenticated with, when it had one. */
    apiKey?: KeyIdentity;
  }
}
