// POST /api/secret-scanning/: GitHub's secret-scanning partner endpoint (docs/secret-scanning.md). GitHub posts a JSON
// array of tokens of our format found in public places, signed with ECDSA P-256 over the raw body; every key among
// them is revoked at once on every instance, and the answer labels each token. The signature is checked on the bytes
// received before anything is parsed: a missing or bad signature, a body that does not match it or an unknown key
// identifier is a 4xx and changes nothing. No API key and no CORS: GitHub is the only client.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, InvalidRequestError } from '../../errors.ts';
import { revokePublishedKeys, type PublishedToken } from '../../api-keys/leaks.ts';
import { clientAddress, createLimiter } from '../../access/rate-limit.ts';
import { NestedTooDeepError, nestedDeeper } from '../../http/json-nesting.ts';
import { GithubPublicKeys, verifySignature } from './github-keys.ts';

export const SECRET_SCANNING_PATH = '/api/secret-scanning';
/** GitHub batches reports; a megabyte holds thousands of tokens. */
export const SECRET_SCANNING_BODY_LIMIT = 1024 * 1024;
const IDENTIFIER = 'github-public-key-identifier';
const SIGNATURE = 'github-public-key-signature';

function header(request: FastifyRequest, name: string): string {
  const value = request.headers[name];
  if (typeof value !== 'string' || value.trim() === '' || value.length > 512)
    throw new InvalidRequestError([
      { loc: ['header', name], msg: 'is required (one value of at most 512 characters)' },
    ]);
  return value.trim();
}

/** The report's items, or a 400 naming what is wrong. */
function readReport(body: Buffer): PublishedToken[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new InvalidRequestError([{ loc: ['body'], msg: 'is not valid JSON' }]);
  }
  if (!Array.isArray(parsed)) throw new InvalidRequestError([{ loc: ['body'], msg: 'must be an array' }]);
  return parsed.map((item: unknown, index) => {
    const { token, type, url, source } = (item ?? {}) as Record<string, unknown>;
    if (typeof token !== 'string' || typeof type !== 'string')
      throw new InvalidRequestError([{ loc: ['body', index], msg: 'must have string token and type' }]);
    return {
      token,
      type,
      url: typeof url === 'string' ? url : '',
      source: typeof source === 'string' ? source : '',
    };
  });
}

export function secretScanningRoutes(app: FastifyInstance): void {
  const keys = new GithubPublicKeys({
    apiUrl: app.config.github.apiUrl,
    token: app.config.github.token,
    clock: app.shared.clock,
    onError: (error) => app.log.warn({ err: error }, "GitHub's secret-scanning public keys could not be fetched"),
  });
  // The same per-address limit as anonymous REST calls, in a bucket of its own.
  const limit = createLimiter({
    limit: app.config.rateLimitPerSecond,
    fields: app.config.rateLimitHeaders,
    counter: app.shared.counter,
    clock: app.shared.clock,
    identity: (request) => `scan:${clientAddress(request)}`,
  });
  // The raw bytes, which the signature covers (this plugin's scope only); scanned, not parsed, for their nesting.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    nestedDeeper((body as Buffer).toString('latin1')) ? done(new NestedTooDeepError(), undefined) : done(null, body),
  );

  app.post(
    SECRET_SCANNING_PATH,
    {
      bodyLimit: SECRET_SCANNING_BODY_LIMIT,
      schema: { hide: true },
      onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
        const limiting = limit(request, reply);
        if (limiting) await limiting;
      },
    },
    async (request, reply) => {
      const identifier = header(request, IDENTIFIER);
      const signature = header(request, SIGNATURE);
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const found = await keys.find(identifier);
      if ('unavailable' in found)
        throw new AppError(
          503,
          { message: "GitHub's public keys could not be fetched; try again later" },
          {
            'retry-after': '60',
          },
        );
      if ('unknown' in found) throw new AppError(401, { message: 'Unknown public key identifier' });
      if (!verifySignature(found.key, body, signature))
        throw new AppError(401, { message: 'Signature does not match the body' });
      const labels = await revokePublishedKeys(
        app.database.db,
        readReport(body),
        app.shared.changes,
        request.log,
        new Date(app.shared.clock()),
      );
      return reply.header('cache-control', 'no-store').type('application/json; charset=utf-8').send(labels);
    },
  );
}
