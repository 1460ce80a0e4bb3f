// Number path segments (issue and milestone numbers) must be plain digits. AJV's coercion would read
// `1e2` as 100 and `0x10` as 16, serving another record instead of the 400 the contract asks for.
// Every detail route runs it (see routes.ts).
import type { FastifyRequest } from 'fastify';
import { invalidParam } from '../../../errors.ts';

const DIGITS = /^\d+$/;

interface ParamsSchema {
  properties?: Record<string, { type?: string }>;
}

/**
 * A hook of a synchronous check in Fastify's callback form: what the check throws is the request's answer. (An async
 * hook that awaits nothing reads as if it waited for something.)
 */
export function syncHook(check: (request: FastifyRequest) => void) {
  return (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void => {
    try {
      check(request);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
}

/** preValidation hook: rejects integer-typed path parameters that are not written as digits. */
export const strictIntegerParams = syncHook(checkIntegerParams);

function checkIntegerParams(request: FastifyRequest): void {
  const properties = (request.routeOptions.schema?.params as ParamsSchema | undefined)?.properties;
  const params = request.params as Record<string, unknown> | undefined;
  if (!properties || !params) return;
  for (const [name, schema] of Object.entries(properties)) {
    const value = params[name];
    // PostgreSQL text cannot hold U+0000: refuse it here rather than fail in the query.
    if (typeof value === 'string' && value.includes('\u0000'))
      throw invalidParam('path', name, 'must not contain NUL characters');
    if (schema.type === 'integer' && typeof value === 'string' && !DIGITS.test(value)) {
      throw invalidParam('path', name, 'must be an integer');
    }
  }
}

/** Numbers are PostgreSQL integers: anything larger is a 400, never a database error. */
export const NUMBER_RANGE = { minimum: 1, maximum: 2_147_483_647 };
