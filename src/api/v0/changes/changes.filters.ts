// The filters of the change log's readers (issue 43, docs/changes.md), shared by the pull feed (`GET /changes/`) and the
// stream (`GET /changes/stream`): the querystring schema, and changeFilterOf, which reads a query into a ChangeFilter.
// The schema validates first on a route (normalizeQuery makes the repeatable ones arrays, lower-cased); changeFilterOf
// checks every value again, so that it also reads a query no schema saw (the raw strings of a stream's request).
import { Type } from '@sinclair/typebox';
import { InvalidRequestError, type ParamError } from '../../../errors.ts';
import {
  CHANGE_TYPES,
  isLoggedResource,
  RESOURCE_NAMES,
  type ChangeFilter,
  type LoggedResource,
} from '../../../changes/change-log.ts';
import { parseInstant } from '../common/updated-window.ts';

/** The longest record key: an issue's or a milestone's URL. */
export const MAX_KEY_LENGTH = 500;

// As normalizeQuery (common/query.ts) reads integers: at most 15 digits.
const INTEGER = /^\+?\d{1,15}$/;
const MAX_ID = 999_999_999_999_999;

export const ChangeFilters = Type.Object({
  after: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_ID,
      description:
        'Only the changes after this id (the greatest `id` already read): how a reader resumes. An id older than the ' +
        'oldest kept (`CHANGES_RETENTION_DAYS`) is 410; start again from the dumps.',
    }),
  ),
  since: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description:
        'Only the changes that occurred at or after this instant: an RFC 3339 date-time with a zone, e.g. ' +
        '`2026-05-01T12:00:00Z`. Before the retention cut-off it is 410.',
    }),
  ),
  resource: Type.Optional(
    Type.Array(Type.Unsafe<LoggedResource>(Type.String({ enum: [...RESOURCE_NAMES] })), {
      maxItems: RESOURCE_NAMES.length,
      description:
        'Only the changes of this list (`chapters`, `issues`, …); repeat the parameter for several (either).',
    }),
  ),
  type: Type.Optional(
    Type.Array(Type.Unsafe<string>(Type.String({ enum: [...CHANGE_TYPES] })), {
      maxItems: CHANGE_TYPES.length,
      description:
        'Only the changes of this type (`chapter.created`, `issue.updated`, `release.deleted`, …); repeat the ' +
        'parameter for several (either).',
    }),
  ),
  key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_KEY_LENGTH,
      description:
        "Only the changes of this record, named as in the deletion feed (a chapter's `key`, a member's `login`, a " +
        "repository's `owner/name`, an issue's `url`): with exactly one `resource`.",
    }),
  ),
});

const listOf = (raw: unknown): unknown[] => (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]);

/** The values of a repeatable parameter, trimmed and lower-cased, blanks dropped; each one must be `allowed`. */
function oneOf(name: string, raw: unknown, allowed: readonly string[], errors: ParamError[]): string[] {
  const values = listOf(raw)
    .map((value) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
    .filter((value) => value !== '');
  if (values.length > allowed.length) {
    errors.push({ loc: ['query', name], msg: `must have at most ${allowed.length} values` });
    return [];
  }
  if (values.some((value) => typeof value !== 'string' || !allowed.includes(value))) {
    errors.push({ loc: ['query', name], msg: `must be one of: ${allowed.join(', ')}` });
    return [];
  }
  return [...new Set(values as string[])];
}

/**
 * The filter a query asks for: `after`, `since`, `resource` and `type` (repeatable), `key` (with one `resource`).
 * Throws a 400 (InvalidRequestError) naming every parameter that is wrong, and the allowed values of an unknown one.
 */
export function changeFilterOf(query: Record<string, unknown>): ChangeFilter {
  const errors: ParamError[] = [];
  const filter: { -readonly [K in keyof ChangeFilter]: ChangeFilter[K] } = {};
  const single = (name: string): string | undefined => {
    const raw = query[name];
    if (raw === undefined) return undefined;
    const value = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
    if (value === undefined) errors.push({ loc: ['query', name], msg: 'must be given once' });
    else if (value.includes('\u0000')) errors.push({ loc: ['query', name], msg: 'must not contain NUL characters' });
    else return value === '' ? undefined : value;
    return undefined;
  };

  const after = single('after');
  if (after !== undefined) {
    const id = INTEGER.test(after) ? Number(after) : NaN;
    if (!Number.isSafeInteger(id))
      errors.push({ loc: ['query', 'after'], msg: 'must be a non-negative integer (an id)' });
    else filter.after = id;
  }
  const since = single('since');
  if (since !== undefined) {
    const instant = since.length <= 40 ? parseInstant(since) : undefined;
    if (!instant)
      errors.push({
        loc: ['query', 'since'],
        msg: 'must be an RFC 3339 date-time with a time zone, e.g. 2026-05-01T12:00:00Z',
      });
    else filter.since = new Date(instant.ms);
  }
  const resources = oneOf('resource', query.resource, RESOURCE_NAMES, errors).filter(isLoggedResource);
  if (resources.length > 0) filter.resources = resources;
  const types = oneOf('type', query.type, CHANGE_TYPES, errors);
  if (types.length > 0) filter.types = types;
  const key = single('key');
  if (key !== undefined) {
    if (key.length > MAX_KEY_LENGTH)
      errors.push({ loc: ['query', 'key'], msg: `must be at most ${MAX_KEY_LENGTH} characters` });
    else if (resources.length !== 1 && !errors.some((error) => error.loc[1] === 'resource'))
      errors.push({ loc: ['query', 'key'], msg: 'needs exactly one `resource` (a key names a record of one list)' });
    else filter.key = key;
  }
  if (errors.length > 0) throw new InvalidRequestError(errors);
  return filter;
}
