// Normalizes raw query strings before schema validation, driven by each route's own schema:
// the contract wants stricter integers than AJV's coercion (`1e2` is not a page number), wider
// booleans (yes/no/on/off), case-insensitive enumerations, and empty values treated as absent.
import type { FastifyRequest } from 'fastify';
import { InvalidRequestError, type ParamError } from '../../../errors.ts';
import { syncHook } from './params.ts';

interface PropertySchema {
  type?: string;
  enum?: unknown[];
  anyOf?: PropertySchema[];
  const?: unknown;
  items?: PropertySchema;
}

const INTEGER = /^[+]?\d{1,15}$/;
/** A decimal number as a query string may write it: no exponent, no `NaN` or `Infinity` (near.ts reads its pair with it). */
export const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

function isEnum(schema: PropertySchema): boolean {
  return Array.isArray(schema.enum) || (schema.anyOf?.every((s) => s.const !== undefined) ?? false);
}

export const normalizeQuery = syncHook(normalize);

function normalize(request: FastifyRequest): void {
  const schema = request.routeOptions.schema?.querystring as
    { properties?: Record<string, PropertySchema> } | undefined;
  const properties = schema?.properties;
  const query = request.query as Record<string, unknown>;
  if (!properties || !query || typeof query !== 'object') return;
  const errors: ParamError[] = [];
  for (const [name, raw] of Object.entries(query)) {
    // Own properties only: `constructor` or `__proto__` are unknown parameters, not Object.prototype's.
    const property = Object.hasOwn(properties, name) ? properties[name] : undefined;
    // A repeatable enumeration (`type=code&type=tool`): each value as a single one, blanks dropped.
    if (property?.type === 'array' && property.items && isEnum(property.items)) {
      const values = (Array.isArray(raw) ? raw : [raw])
        .map((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v))
        .filter((v) => v !== '');
      if (values.length === 0) delete query[name];
      else query[name] = values;
      continue;
    }
    // A repeatable text (`label=bug&label=docs`): each value trimmed, blanks dropped; NUL cannot reach SQL text.
    if (property?.type === 'array' && property.items?.type === 'string') {
      const values = (Array.isArray(raw) ? raw : [raw]).map((v) => (typeof v === 'string' ? v.trim() : v));
      if (values.some((v) => typeof v === 'string' && v.includes('\u0000')))
        errors.push({ loc: ['query', name], msg: 'must not contain NUL characters' });
      const kept = values.filter((v) => v !== '');
      if (kept.length === 0) delete query[name];
      else query[name] = kept;
      continue;
    }
    if (!property || typeof raw !== 'string') continue;
    // The search parser reads control characters, NUL included, as whitespace; elsewhere NUL cannot reach SQL text.
    if (name !== 'q' && raw.includes('\u0000')) {
      errors.push({ loc: ['query', name], msg: 'must not contain NUL characters' });
      continue;
    }
    const value = raw.trim();
    if (value === '') {
      delete query[name];
    } else if (property.type === 'integer') {
      if (!INTEGER.test(value)) errors.push({ loc: ['query', name], msg: 'must be an integer' });
      else query[name] = value;
    } else if (property.type === 'number') {
      // 309 digits and more overflow a double to ±Infinity, which would pass every bound.
      if (!DECIMAL.test(value) || !Number.isFinite(Number(value)))
        errors.push({ loc: ['query', name], msg: 'must be a decimal number' });
      else query[name] = value;
    } else if (property.type === 'boolean') {
      const lower = value.toLowerCase();
      if (TRUE.has(lower)) query[name] = 'true';
      else if (FALSE.has(lower)) query[name] = 'false';
      else errors.push({ loc: ['query', name], msg: 'must be a boolean: true/false, 1/0, yes/no, on/off' });
    } else if (isEnum(property)) {
      query[name] = value.toLowerCase();
    }
  }
  if (errors.length > 0) throw new InvalidRequestError(errors);
}
