// Every tool call is one REST request, made in-process (`app.inject`) with the caller's X-API-Key and address: the
// REST API's own authentication, rate limit (one request per call), validation, queries and response cache answer
// it, so a tool can reach nothing REST would not give that key. Its answer becomes the tool's: a record or a page, a
// tool error (400, 404: the model can correct the call), or the HTTP status of the /mcp response itself (401, 429,
// 503: the client must act, and sees the real status and headers).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { ToolError } from './mcp.input.ts';

export interface RestAnswer {
  body: Record<string, unknown>;
  /** The `cursor` of the `Link` header's `next` page, when there is one. */
  next: string | undefined;
}

export type Rest = (path: string, query?: URLSearchParams) => Promise<RestAnswer>;

/** Headers of REST's answer the /mcp response carries: the limit's, and a refusal's. */
const PASSED_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'retry-after',
  'www-authenticate',
  'api-key-expiration',
];
/** Answers about the call itself: the model can correct it (410: changes asked for before what the log keeps). */
const TOOL_ERRORS = new Set([400, 404, 410, 414]);

export function restFor(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Rest {
  const key = request.headers['x-api-key'];
  // The /mcp request's id, so that the REST request's log lines carry it too.
  const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': request.id };
  if (key !== undefined) headers['x-api-key'] = String(key);
  return async (path, query) => {
    const search = query?.toString();
    const res = await app.inject({
      method: 'GET',
      url: search ? `${path}?${search}` : path,
      headers,
      remoteAddress: request.ip,
    });
    const passed: Record<string, string> = {};
    for (const name of PASSED_HEADERS) {
      const value = res.headers[name];
      if (value !== undefined) passed[name] = String(value);
    }
    const body = parse(res.body);
    if (res.statusCode === 200) {
      reply.headers(passed);
      return { body, next: nextCursor(res.headers.link) };
    }
    if (TOOL_ERRORS.has(res.statusCode)) {
      reply.headers(passed);
      throw new ToolError(messageOf(body));
    }
    throw new AppError(res.statusCode, body, passed);
  };
}

function parse(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { message: text.slice(0, 200) };
  }
}

/** REST's error body in one line: `Chapter not found`, `Invalid request: country: must be …`. */
function messageOf(body: Record<string, unknown>): string {
  const message = String(body.message ?? body.detail ?? 'Request refused');
  const errors = Array.isArray(body.errors) ? (body.errors as { loc?: unknown[]; msg?: string }[]) : [];
  const details = errors.map(({ loc, msg }) => {
    const name = Array.isArray(loc) && loc.length > 1 ? String(loc[loc.length - 1]) : '';
    return name ? `${name}: ${msg}` : String(msg);
  });
  return details.length > 0 ? `${message}: ${details.join('; ')}` : message;
}

function nextCursor(link: string | string[] | undefined): string | undefined {
  const next = String(link ?? '')
    .split(/,\s*(?=<)/)
    .find((part) => /;\s*rel="next"/.test(part));
  const target = next ? /^<([^>]*)>/.exec(next)?.[1] : undefined;
  if (!target) return undefined;
  return new URLSearchParams(target.split('?')[1] ?? '').get('cursor') ?? undefined;
}
