// The one error vocabulary. Handlers throw these; the error handler in app.ts turns them into bodies.

export interface ParamError {
  loc: (string | number)[];
  msg: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.message === 'string' ? body.message : String(body.detail ?? 'error'));
    this.name = 'AppError';
  }
}

/** 400: a query or path parameter is invalid. */
export class InvalidRequestError extends AppError {
  constructor(errors: ParamError[]) {
    super(400, { message: 'Invalid request', errors });
  }
}

export function invalidParam(location: 'query' | 'path', name: string, msg: string): InvalidRequestError {
  return new InvalidRequestError([{ loc: [location, name], msg }]);
}

/** 404 for a detail record: `{"message": "Chapter not found"}`. */
export class NotFoundError extends AppError {
  constructor(resource: string) {
    super(404, { message: `${resource} not found` });
  }
}

// Error codes and messages of node-postgres and PGlite that mean "the database is not there",
// as opposed to a bug in a query: those become 503 and the pool reconnects on the next request.
// 57014: a statement cancelled by statement_timeout (overload), also answered with 503.
// LIST_QUEUE_FULL: too many list queries already waiting for the list pool (db/server/server-pools.ts).
// Class 53 (insufficient resources: 53100 disk full, 53200 out of memory, 53300 too many connections, 53400 a
// configured limit) and 58030 (an I/O error): the server cannot serve for now, an outage rather than a bug.
// `Query read timeout`: no answer within node-postgres' query_timeout (a server cut off without a reset, db/index.ts).
const UNAVAILABLE_CODES = new Set([
  '57014',
  'LIST_QUEUE_FULL',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '58030',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || /^(08|53)/.test(code))) return true;
  if (typeof message !== 'string') return false;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|PGlite is closed|connect ECONNREFUSED|Query read timeout/i.test(
    message,
  );
}

// The HTTP errors of the REST API's gate and content negotiation (401, 406, 429).

export const UNAUTHORIZED_BODY = { detail: "Missing or invalid API key in 'X-API-Key' header" };
const CHALLENGE = 'ApiKey realm="api", header="X-API-Key"';

export class UnauthorizedError extends AppError {
  constructor() {
    super(401, UNAUTHORIZED_BODY, { 'www-authenticate': CHALLENGE });
  }
}

export class NotAcceptableError extends AppError {
  constructor(offered: readonly string[]) {
    super(
      406,
      {
        message: 'Not acceptable',
        errors: [{ loc: ['header', 'accept'], msg: `must allow one of: ${offered.join(', ')}` }],
      },
      { vary: 'Accept' },
    );
  }
}

export class TooManyRequestsError extends AppError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, { detail: 'Too many requests.' }, { ...headers, 'retry-after': String(retryAfterSeconds) });
  }
}

/** 429 for one stream of changes more than CHANGES_STREAMS_PER_KEY allows a key (access/stream-keys.ts). */
export class TooManyStreamsError extends AppError {
  constructor(limit: number) {
    super(
      429,
      { detail: `Too many open streams for this API key (at most ${limit}): close one before opening another.` },
      { 'retry-after': '15' },
    );
  }
}
