// The sync's GitHub REST client: @octokit/rest with its retry plugin (5xx answers, dropped connections)
// and throttling plugin (primary and secondary rate limits, Retry-After), over a fetch that counts what
// it sends, gives up on silent servers, and waits when the rate-limit headers say the budget is spent.
import { setTimeout as sleep } from 'node:timers/promises';
import { Octokit } from '@octokit/rest';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { VERSION } from '../../version.ts';
import type { SyncLog } from './sync-log.ts';

const SyncOctokit = Octokit.plugin(retry, throttling);
export type GithubClient = InstanceType<typeof SyncOctokit>;

export interface RequestStats {
  /** HTTP requests sent, retries included. */
  total: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  /** Requests that got no answer (connection dropped, timed out). */
  failed: number;
}

export interface GithubClientOptions {
  apiUrl: string;
  token?: string | undefined;
  log: SyncLog;
  signal?: AbortSignal | undefined;
  /** Retry n of a 5xx or dropped request waits n² times this (octokit's default: 1000 ms). */
  retryBaseMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
  /** The longest wait for the hourly rate limit to reset; beyond it the run fails and resumes next time. */
  maxRateLimitWaitS?: number | undefined;
}

export function createGithubClient(options: GithubClientOptions): { octokit: GithubClient; stats: RequestStats } {
  const { log, signal } = options;
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const maxWaitS = options.maxRateLimitWaitS ?? 3_600;
  const stats: RequestStats = { total: 0, statuses: {}, failed: 0 };
  let resumeAt = 0;

  const limitedFetch: typeof fetch = async (input, init) => {
    const wait = resumeAt - Date.now();
    // Spending requests GitHub will refuse only brings the secondary limit closer.
    if (wait > 0 && wait <= maxWaitS * 1000) {
      log.warn(`GitHub rate limit spent: waiting ${Math.ceil(wait / 1000)} s for it to reset`);
      await sleep(wait, undefined, { signal });
    }
    stats.total++;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signals = [timeout, init?.signal, signal].filter((s): s is AbortSignal => !!s);
    let response: Response;
    try {
      response = await fetch(input, { ...init, signal: AbortSignal.any(signals) });
    } catch (error) {
      stats.failed++;
      // A network failure (TypeError) is retried by the retry plugin; an abort of the run is not.
      if (timeout.aborted && !signal?.aborted) throw new TypeError('fetch failed', { cause: new Error(`no answer within ${timeoutMs} ms`) });
      throw error;
    }
    stats.statuses[response.status] = (stats.statuses[response.status] ?? 0) + 1;
    if (response.headers.get('x-ratelimit-remaining') === '0') {
      resumeAt = Number(response.headers.get('x-ratelimit-reset')) * 1000 + 1000;
    }
    return response;
  };

  const octokit = new SyncOctokit({
    auth: options.token,
    baseUrl: options.apiUrl,
    userAgent: `community-data-service/${VERSION}`,
    request: { fetch: limitedFetch },
    retry: { retryAfterBaseValue: options.retryBaseMs ?? 1_000 },
    throttle: {
      onRateLimit: (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
        const again = retryCount < 2 && retryAfter <= maxWaitS;
        log.warn(`GitHub rate limit on ${request.method} ${request.url}: ${again ? `retrying in ${retryAfter} s` : 'giving up'}`);
        return again;
      },
      onSecondaryRateLimit: (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
        const again = retryCount < 3;
        log.warn(`GitHub secondary rate limit on ${request.method} ${request.url}: ${again ? `retrying in ${retryAfter} s` : 'giving up'}`);
        return again;
      },
    },
    // Octokit logs every non-2xx answer as a warning; a 304 is the outcome we hope for.
    log: { debug: () => {}, info: () => {}, warn: (message: string) => notable(message), error: (message: string) => notable(message) },
  });
  return { octokit, stats };

  function notable(message: string): void {
    if (!/ - 304 with id /.test(message)) log.warn(message);
  }
}
