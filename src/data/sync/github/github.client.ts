// The sync's GitHub REST client: @octokit/rest with its retry plugin (5xx answers, dropped connections), over
// a fetch that goes through the request gate (github.gate.ts): requests in flight and per minute are capped,
// and rate limits are handled here, for every worker at once. A secondary limit (403/429 with Retry-After, or
// GitHub's "secondary rate limit" message) pauses all requests for Retry-After seconds, else one minute, then
// two…; a spent hourly budget (x-ratelimit-remaining: 0) pauses them until x-ratelimit-reset. A pause longer
// than maxRateLimitWaitS, or the run's own request budget spent, stops the run (the next run resumes).
import { Octokit } from '@octokit/rest';
import { retry } from '@octokit/plugin-retry';
import { VERSION } from '../../../version.ts';
import { RateLimitStop, RequestGate, SYSTEM_CLOCK, type SyncClock } from './github.gate.ts';
import type { SyncLog } from '../../base/sync-log.ts';

const SyncOctokit = Octokit.plugin(retry);
export type GithubClient = InstanceType<typeof SyncOctokit>;

export interface RequestStats {
  /** HTTP requests sent, retries included. */
  total: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  /** Requests that got no answer (connection dropped, timed out). */
  failed: number;
  /** Answers that count against GitHub's hourly budget (all but 304s, which are free when authenticated). */
  counted: number;
  /** GitHub's budget as its last answer stated it. */
  rateLimit: { limit: number; remaining: number; resetAt: string } | null;
  /** Time all requests were held by rate limits. */
  pausedMs: number;
  /** Why the run stopped early for rate limits or budget, when it did. */
  stopped?: string;
}

export interface GithubClientOptions {
  apiUrl: string;
  token?: string | undefined;
  log: SyncLog;
  signal?: AbortSignal | undefined;
  /** Retry n of a 5xx or dropped request waits n² times this (octokit's default: 1000 ms). */
  retryBaseMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
  /** The longest pause for a rate limit; a longer one stops the run, and the next run resumes. */
  maxRateLimitWaitS?: number | undefined;
  /** Requests in flight at once (GitHub asks integrations to send them one at a time). */
  requestConcurrency?: number | undefined;
  /** Requests started per minute at most (GitHub's secondary limit is 900 points a minute for REST). */
  requestsPerMinute?: number | undefined;
  /** Answers counted against the hourly budget this run may use; the run stops before it would use more. */
  budget?: number | undefined;
  clock?: SyncClock | undefined;
}

export const DEFAULT_REQUEST_CONCURRENCY = 1;
export const DEFAULT_REQUESTS_PER_MINUTE = 600;
export const DEFAULT_MAX_RATE_LIMIT_WAIT_S = 900;
// Secondary limit without Retry-After: GitHub says to wait at least a minute, longer on each repeat.
const SECONDARY_WAIT_MS = 60_000;
const SECONDARY_RETRIES = 3;

export function createGithubClient(options: GithubClientOptions): { octokit: GithubClient; stats: RequestStats } {
  const { log, signal } = options;
  const clock = options.clock ?? SYSTEM_CLOCK;
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const maxWaitMs = (options.maxRateLimitWaitS ?? DEFAULT_MAX_RATE_LIMIT_WAIT_S) * 1000;
  const stats: RequestStats = { total: 0, statuses: {}, failed: 0, counted: 0, rateLimit: null, pausedMs: 0 };
  const gate = new RequestGate({
    clock,
    signal,
    concurrency: options.requestConcurrency ?? DEFAULT_REQUEST_CONCURRENCY,
    perMinute: options.requestsPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE,
  });

  const halt = (reason: string): RateLimitStop => {
    stats.stopped ??= reason;
    stats.pausedMs = gate.pausedMs;
    gate.halt(new RateLimitStop(reason));
    return gate.halted!;
  };
  const stop = (reason: string): never => {
    throw halt(reason);
  };

  /** Pauses every request until `until`; when that is too far, the run stops (at once, or before its next request). */
  const pauseUntil = (until: number, why: string, now: boolean) => {
    const wait = until - clock.now();
    if (wait > maxWaitMs) {
      const reason = `${why}: GitHub allows requests again at ${new Date(until).toISOString()}, beyond the ${maxWaitMs / 1000} s this run may wait`;
      if (now) stop(reason);
      halt(reason);
      return;
    }
    if (wait > 0) log.warn(`${why}: pausing every request for ${Math.ceil(wait / 1000)} s`);
    gate.pause(until);
  };

  const send = async (input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]): Promise<Response> => {
    await gate.acquire();
    try {
      if (options.budget !== undefined && stats.counted >= options.budget) {
        stop(`the run's budget of ${options.budget} counted requests is spent`);
      }
      stats.total++;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signals = [timeout, init?.signal, signal].filter((s): s is AbortSignal => !!s);
      try {
        return await fetch(input, { ...init, signal: AbortSignal.any(signals) });
      } catch (error) {
        stats.failed++;
        // A network failure (TypeError) is retried by the retry plugin; an abort of the run is not.
        if (timeout.aborted && !signal?.aborted)
          throw new TypeError('fetch failed', { cause: new Error(`no answer within ${timeoutMs} ms`) });
        throw error;
      }
    } finally {
      gate.release();
    }
  };

  const limitedFetch: typeof fetch = async (input, init) => {
    for (let secondary = 0; ;) {
      const response = await send(input, init);
      stats.statuses[response.status] = (stats.statuses[response.status] ?? 0) + 1;
      if (response.status !== 304) stats.counted++;
      const headers = response.headers;
      const remaining = headers.get('x-ratelimit-remaining');
      const reset = Number(headers.get('x-ratelimit-reset'));
      if (remaining !== null && Number.isFinite(reset) && reset > 0) {
        stats.rateLimit = {
          limit: Number(headers.get('x-ratelimit-limit')),
          remaining: Number(remaining),
          resetAt: new Date(reset * 1000).toISOString(),
        };
      }
      const limited = await rateLimited(response);
      const where = `${init?.method ?? 'GET'} ${String(input)}`;
      if (limited === 'secondary') {
        if (++secondary > SECONDARY_RETRIES)
          stop(`GitHub secondary rate limit on ${where}, ${SECONDARY_RETRIES} times in a row`);
        const after = retryAfterMs(headers.get('retry-after'), clock.now());
        pauseUntil(
          clock.now() + (after ?? SECONDARY_WAIT_MS * 2 ** (secondary - 1)),
          `GitHub secondary rate limit on ${where}`,
          true,
        );
        continue;
      }
      if (limited === 'primary') {
        pauseUntil(reset * 1000, `GitHub rate limit spent on ${where}`, true);
        continue;
      }
      // The last request of the hour succeeded: the next one must wait for the reset.
      if (remaining === '0' && Number.isFinite(reset) && reset > 0)
        pauseUntil(reset * 1000, 'GitHub rate limit spent', false);
      stats.pausedMs = gate.pausedMs;
      return response;
    }
  };

  const octokit = new SyncOctokit({
    auth: options.token,
    baseUrl: options.apiUrl,
    userAgent: `community-data-service/${VERSION}`,
    request: { fetch: limitedFetch },
    // Rate-limit answers never reach octokit (handled above), except a 403/429 that stops the run.
    retry: { retryAfterBaseValue: options.retryBaseMs ?? 1_000, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
    // Octokit logs every non-2xx answer as a warning; a 304 is the outcome we hope for.
    log: {
      debug: () => {},
      info: () => {},
      warn: (message: string) => notable(message),
      error: (message: string) => notable(message),
    },
  });
  return { octokit, stats };

  function notable(message: string): void {
    if (!/ - 304 with id /.test(message)) log.warn(message);
  }
}

/** 'secondary' or 'primary' when the answer is GitHub refusing for rate limits, else undefined. */
async function rateLimited(response: Response): Promise<'primary' | 'secondary' | undefined> {
  if (response.status !== 403 && response.status !== 429) return undefined;
  if (response.headers.get('retry-after') !== null) return 'secondary';
  if (response.headers.get('x-ratelimit-remaining') === '0') return 'primary';
  const text = await response
    .clone()
    .text()
    .catch(() => '');
  if (response.status === 429 || /secondary rate limit|abuse detection/i.test(text)) return 'secondary';
  return undefined;
}

/** Retry-After in seconds or as an HTTP date, in milliseconds from now. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
