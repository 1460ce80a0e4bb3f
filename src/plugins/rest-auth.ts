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

/** Installs the hook on the given (REST) scope; routes with `config: { public: true }` are skipped. */
const FAILURE_WINDOW_MS = 60_000;

export function registerRestAuth(app: FastifyInstance): void {
  const { counter } = app.shared;
  const recorder = new LastUsedRecorder(app.database.db, (error) => app.log.warn({ err: error }, 'lastUsedAt not recorded'));
  app.addHook('onClose', () => recorder.flush());

  app.addHook('onRequest', async (request: FastifyRequest) => {
    if ((request.routeOptions.config as { public?: boolean } | undefined)?.public) return;
    const header = request.headers['x-api-key'];
    if (header === undefined) {
      if (app.config.restAuth === 'optional') return;
      throw new UnauthorizedError();
    }
    // Brute-force guard: an address that keeps sending wrong keys is slowed down first.
    const failures = `auth-fail:${request.ip}`;
    if ((await counter.peek(failures, FAILURE_WINDOW_MS)) >= app.config.authFailuresPerMinute) {
      throw new TooManyRequestsError(Math.ceil(FAILURE_WINDOW_MS / 1000));
    }
    const identity = typeof header === 'string' ? await authenticateApiKey(app.database.db, header.trim(), app.shared.authCache) : null;
    if (!identity) {
      await counter.hit(failures, FAILURE_WINDOW_MS);
      throw new UnauthorizedError();
    }
    request.apiKey = identity;
    recorder.record(identity.keyId);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key the request authenticated with, when it had one. */
    apiKey?: KeyIdentity;
  }
  interface FastifyContextConfig {
    public?: boolean;
  }
}
