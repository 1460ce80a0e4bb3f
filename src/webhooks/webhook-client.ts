// The outbound POST of one delivery: to the address checked just before (webhook-targets.ts) whatever the name
// resolves to now, the URL's host in `Host` and in TLS (SNI, certificate check); no redirect followed (a 3xx is a
// failure), one time limit for the whole exchange, at most 1 kB of the answer kept.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './webhook-targets.ts';

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const KEPT_ANSWER_BYTES = 1024;

export interface PostOutcome {
  /** The answer's status; undefined when none came (refused, reset, timed out, TLS failure). */
  status?: number;
  /** The first bytes of the answer (at most KEPT_ANSWER_BYTES), as text. */
  body?: string;
  /** Why no answer came. */
  error?: string;
}

/** At most `limit` bytes of UTF-8, never a broken character, no NUL (which PostgreSQL text refuses). */
function keep(bytes: Buffer, limit: number): string {
  let text = bytes.subarray(0, limit).toString('utf8').replaceAll('\u0000', '');
  while (Buffer.byteLength(text) > limit) text = text.slice(0, -1);
  return text;
}

export function postMessage(
  url: URL,
  target: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  timeoutMs = ATTEMPT_TIMEOUT_MS,
  signal?: AbortSignal,
): Promise<PostOutcome> {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        lookup,
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          finish({ status: response.statusCode ?? 0, body: keep(Buffer.concat(chunks), KEPT_ANSWER_BYTES) });
          response.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          if (size < KEPT_ANSWER_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= KEPT_ANSWER_BYTES) done();
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ error: `no answer within ${timeoutMs / 1000} s` });
    }, timeoutMs);
    timer.unref();
    // The worker stopping (a graceful shutdown) does not wait for a slow endpoint.
    signal?.addEventListener('abort', () => request.destroy(new Error('stopped')), { once: true });
    request.on('error', (error: NodeJS.ErrnoException) => finish({ error: error.code ?? error.message }));
    request.end(body);
  });
}
