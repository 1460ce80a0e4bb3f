// X-API-Key authentication of the REST operations. REST_AUTH=required: no key → 401;
// optional: no key is served anonymously, but a key that is present must be valid.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { authenticateApiKey, type KeyIdentity } from '../api-keys/api-keys.service.ts';
import { LastUsedRecorder } from '../api-keys/last-used.ts';
import { TooManyRequestsError } from './rate-limit.ts';

export const UNAUTHORIZED_BODY = { detail: "Missing or invalid API key in 'X-API-Key' header" };
const CHALLENGE = 'ApiKey realm="api", header="X-API-Key"';

export class UnauthorizedError extends AppError {
  constructor() {
    super(401, UNAUTHORIZED_BODY, { 'www-authenticate': CHALLENGE });
  }
}

const FAILURE_WINDOW_MS = 60_000;

/**
 * The authentication step of the REST scope. A key remembered as valid is accepted without any
 * await; anything else is checked. `recheck` asks the database again about a request's key (the
 * limiter calls it when another instance has revoked a key since the memory was filled).
 */
export function createAuthenticator(app: FastifyInstance) {
  const { counter, authCache } = app.shared;
  const recorder = new LastUsedRecorder(app.database.db, (error) => app.log.warn({ err: error }, 'lastUsedAt not recorded'));
  app.addHook('onClose', () => recorder.flush());

  const lookup = (header: unknown) => (typeof header === 'string' ? authenticateApiKey(app.database.db, header.trim(), authCache) : null);

  async function check(request: FastifyRequest, header: unknown): Promise<void> {
    // Brute-force guard: an address that keeps sending wrong keys is slowed down first.
    const failures = `auth-fail:${request.ip}`;
    if ((await counter.peek(failures, FAILURE_WINDOW_MS)) >= app.config.authFailuresPerMinute) {
      throw new TooManyRequestsError(Math.ceil(FAILURE_WINDOW_MS / 1000));
    }
    const identity = await lookup(header);
    if (!identity) {
      await counter.hit(failures, FAILURE_WINDOW_MS);
      throw new UnauthorizedError();
    }
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
    const known = typeof header === 'string' ? authCache.get(header) : undefined;
    if (!known) return check(request, header);
    request.apiKey = known;
    recorder.record(known.keyId);
  };
  return { authenticate, recheck };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key the request authenticated with, when it had one. */
    apiKey?: KeyIdentity;
  }
}
