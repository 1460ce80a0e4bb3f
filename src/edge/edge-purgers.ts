// The purge calls of each edge (EDGE_PURGE, docs/edge.md): Varnish's xkey over an HTTP PURGE, Fastly's soft purge by
// surrogate key, Cloudflare's purge by cache tag. A call either succeeds (the API said so) or throws; the queue
// (edge-purge.ts) retries. The tokens go only to their own provider's API, in a header, over a request that follows no
// redirect; they are never part of an error message or a log line.
import type { EdgePurgeSettings } from '../config.ts';
import { EVERYTHING } from './edge-tags.ts';

const TIMEOUT_MS = 10_000;
/** Of an answer, read at most this much (to say why a call failed). */
const MAX_BODY = 2_048;

export interface Purger {
  /** `fastly`, `cloudflare` or `varnish`: the label of the metrics. */
  readonly name: string;
  /** Tags per call (the provider's limit). */
  readonly batch: number;
  /** Purges these tags (or everything, for `*`); throws when the edge did not say yes. */
  purge(tags: readonly string[], signal?: AbortSignal): Promise<void>;
}

export class PurgeFailedError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'PurgeFailedError';
  }
}

export const FASTLY_API = 'https://api.fastly.com';
export const CLOUDFLARE_API = 'https://api.cloudflare.com';

/** The purger of the settings (undefined: EDGE_PURGE is not set). */
export function createPurger(settings: EdgePurgeSettings | undefined): Purger | undefined {
  if (!settings) return undefined;
  switch (settings.provider) {
    case 'varnish':
      return varnish(settings.target);
    case 'fastly':
      return fastly(settings.urlBase ?? FASTLY_API, settings.target, settings.token);
    case 'cloudflare':
      return cloudflare(settings.urlBase ?? CLOUDFLARE_API, settings.target, settings.token);
  }
}

/** One call; a redirect is a failure (manual: a 3xx comes back as it is), so is anything but 2xx. */
async function call(
  provider: string,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  signal?: AbortSignal,
): Promise<string> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      redirect: 'manual',
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    throw new PurgeFailedError(`${provider} purge: no answer (${cause})`);
  }
  const text = (await response.text().catch(() => '')).slice(0, MAX_BODY);
  if (response.status < 200 || response.status > 299)
    throw new PurgeFailedError(`${provider} purge: HTTP ${response.status}`, response.status);
  return text;
}

function varnish(url: string): Purger {
  return {
    name: 'varnish',
    batch: 100,
    async purge(tags, signal) {
      // deploy/varnish/default.vcl: `xkey` lists the keys (space-separated); `X-Purge-All` bans everything.
      const headers: Record<string, string> = tags.includes(EVERYTHING)
        ? { 'x-purge-all': '1' }
        : { xkey: tags.join(' ') };
      await call('varnish', url, { method: 'PURGE', headers }, signal);
    },
  };
}

function fastly(base: string, serviceId: string, token: string): Purger {
  const service = `${base}/service/${encodeURIComponent(serviceId)}`;
  return {
    name: 'fastly',
    // Fastly's limit of keys per call of its surrogate-key purge.
    batch: 256,
    async purge(tags, signal) {
      const auth = { 'fastly-key': token, accept: 'application/json' };
      if (tags.includes(EVERYTHING)) {
        await call('fastly', `${service}/purge_all`, { method: 'POST', headers: auth }, signal);
        return;
      }
      // Soft: the objects are marked stale, not removed (served stale only while the origin cannot answer).
      const headers = { ...auth, 'fastly-soft-purge': '1', 'surrogate-key': tags.join(' ') };
      await call('fastly', `${service}/purge`, { method: 'POST', headers }, signal);
    },
  };
}

function cloudflare(base: string, zoneId: string, token: string): Purger {
  const url = `${base}/client/v4/zones/${encodeURIComponent(zoneId)}/purge_cache`;
  return {
    name: 'cloudflare',
    // Cloudflare's limit of tags per purge call.
    batch: 30,
    async purge(tags, signal) {
      const body = JSON.stringify(tags.includes(EVERYTHING) ? { purge_everything: true } : { tags });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const text = await call('cloudflare', url, { method: 'POST', headers, body }, signal);
      let success = false;
      try {
        success = (JSON.parse(text) as { success?: unknown }).success === true;
      } catch {
        success = false;
      }
      if (!success) throw new PurgeFailedError('cloudflare purge: the answer did not say success');
    },
  };
}
