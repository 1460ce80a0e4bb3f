// Keys found published: GitHub's secret-scanning partner program reports tokens of our format pushed to public
// repositories (src/api/secret-scanning/). Each one that is a key of ours is revoked at once, on every instance, and
// where it was found is kept for its owner's key page. Tokens are looked up by digest; none is stored or logged.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import type { Announcer } from '../announcements/announce.ts';
import { revokeLeakedKeys } from '../announcements/announced-writes.ts';
import { isWellFormedApiKey, sha256Hex } from './api-keys.format.ts';

/** One item of a report, in GitHub's format. */
export interface PublishedToken {
  token: string;
  type: string;
  url: string;
  source: string;
}

/** One item of the answer, in GitHub's format: was the token one of ours? */
export interface TokenLabel {
  token_raw: string;
  token_type: string;
  label: 'true_positive' | 'false_positive';
}

const MAX_URL_LENGTH = 2048;
const MAX_SOURCE_LENGTH = 100;

/**
 * Revokes every key among the tokens, records where each was found, and labels each token: `true_positive` when it
 * is a key of this service (whatever its state: a revoked key that was published was still a real one), else
 * `false_positive` (a malformed token, or one that is no key of ours).
 */
export async function revokePublishedKeys(
  db: Db,
  tokens: readonly PublishedToken[],
  announcer: Announcer,
  log: FastifyBaseLogger,
  now: Date,
): Promise<TokenLabel[]> {
  const digests = tokens.map((item) => (isWellFormedApiKey(item.token) ? sha256Hex(item.token) : undefined));
  const reports = new Map<string, { digest: string; url: string; source: string }>();
  tokens.forEach((item, index) => {
    const digest = digests[index];
    if (digest && !reports.has(digest))
      reports.set(digest, {
        digest,
        url: item.url.slice(0, MAX_URL_LENGTH),
        source: item.source.slice(0, MAX_SOURCE_LENGTH),
      });
  });
  const found = await revokeLeakedKeys(db, [...reports.values()], now, announcer);
  const ours = new Set(found.map((key) => key.digest));
  for (const key of found) {
    const { url, source } = reports.get(key.digest)!;
    // The key's uuid and owner, never the token.
    log.warn(
      { keyUuid: key.uuid, userId: key.userId, wasValid: key.wasValid, url, source },
      'API key reported published by GitHub secret scanning: revoked',
    );
  }
  return tokens.map((item, index) => ({
    token_raw: item.token,
    token_type: item.type,
    label: digests[index] !== undefined && ours.has(digests[index]) ? 'true_positive' : 'false_positive',
  }));
}
