// GitHub's public keys for secret-scanning reports (GET {GITHUB_API_URL}/meta/public_keys/secret_scanning), kept in
// memory by identifier. A report signed with an identifier we do not hold makes us ask again (GitHub rotates its
// keys), but never more than once a minute, so that made-up identifiers cannot turn us into a client that hammers
// GitHub; and the list is asked again after a day, so that a key GitHub withdrew stops being trusted.
import crypto, { type KeyObject } from 'node:crypto';

/** The least time between two requests for the list, in milliseconds. */
export const REFETCH_INTERVAL_MS = 60_000;
/** After this long, the list is asked for again before the next report is checked. */
const MAX_AGE_MS = 86_400_000;
const TIMEOUT_MS = 10_000;
/** GitHub's list is a few kB; anything much larger is not it. */
const MAX_LIST_BYTES = 256 * 1024;

export type KeyLookup = { key: KeyObject } | { unknown: true } | { unavailable: true };

export interface PublicKeysOptions {
  /** GITHUB_API_URL. */
  apiUrl: string;
  /** GITHUB_TOKEN, when set: GitHub's limit of unauthenticated requests is 60 an hour per address. */
  token: string | undefined;
  /** The app's time in epoch milliseconds (tests move it). */
  clock: () => number;
  onError: (error: unknown) => void;
}

export class GithubPublicKeys {
  private keys = new Map<string, KeyObject>();
  /** When the list was last asked for (-Infinity: never), and whether that answer was read. */
  private askedAt = Number.NEGATIVE_INFINITY;
  private lastFailed = false;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private asking: Promise<void> | undefined;
  /** Requests made for the list (tests and metrics). */
  fetches = 0;

  constructor(private readonly options: PublicKeysOptions) {}

  async find(identifier: string): Promise<KeyLookup> {
    const now = this.options.clock();
    const known = this.keys.get(identifier);
    const stale = now - this.loadedAt >= MAX_AGE_MS;
    if ((!known || stale) && now - this.askedAt >= REFETCH_INTERVAL_MS) {
      this.askedAt = now;
      this.asking ??= this.load().finally(() => (this.asking = undefined));
    }
    if (this.asking && (!known || stale)) await this.asking;
    const key = this.keys.get(identifier);
    if (key) return { key };
    // Not confirmed unknown while GitHub could not be asked: the sender should try again.
    return this.lastFailed ? { unavailable: true } : { unknown: true };
  }

  private async load(): Promise<void> {
    this.fetches++;
    try {
      const headers: Record<string, string> = {
        accept: 'application/vnd.github+json',
        'user-agent': 'owasp-community-data-service',
        'x-github-api-version': '2022-11-28',
      };
      if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
      const response = await fetch(`${this.options.apiUrl}/meta/public_keys/secret_scanning`, {
        headers,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: 'error',
      });
      if (!response.ok) throw new Error(`GitHub answered ${response.status} for its secret-scanning public keys`);
      const text = await response.text();
      if (text.length > MAX_LIST_BYTES) throw new Error('the list of public keys is too large');
      this.keys = parseKeys(JSON.parse(text) as unknown);
      this.loadedAt = this.options.clock();
      this.lastFailed = false;
    } catch (error) {
      // The keys already held stay trusted until the next attempt.
      this.lastFailed = true;
      this.options.onError(error);
    }
  }
}

/** The P-256 keys of `{"public_keys": [{"key_identifier", "key" (PEM), "is_current"}]}`; anything else is skipped. */
function parseKeys(body: unknown): Map<string, KeyObject> {
  const list = (body as { public_keys?: unknown } | null)?.public_keys;
  if (!Array.isArray(list)) throw new Error('the answer has no public_keys list');
  const keys = new Map<string, KeyObject>();
  for (const entry of list as { key_identifier?: unknown; key?: unknown }[]) {
    if (typeof entry?.key_identifier !== 'string' || typeof entry.key !== 'string') continue;
    try {
      const key = crypto.createPublicKey(entry.key);
      if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1')
        keys.set(entry.key_identifier, key);
    } catch {
      // Not a PEM public key: skipped.
    }
  }
  return keys;
}

/** ECDSA P-256 with SHA-256 over the raw body; the signature is base64 of its DER encoding, as GitHub sends it. */
export function verifySignature(key: KeyObject, body: Buffer, signature: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature) || signature.length > 200) return false;
  try {
    return crypto.verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
