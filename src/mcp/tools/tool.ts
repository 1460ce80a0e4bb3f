// What the tools share: their shape, the `filters`, `fields`, `limit` and `cursor` arguments, and a page of
// REST's answer made small (the items, the count, the next cursor; not the page numbers a model never needs).
import type { Catalogue, ListEntry } from '../mcp.catalogue.ts';
import { RESERVED } from '../mcp.catalogue.ts';
import { ToolError, type JsonSchema } from '../mcp.input.ts';
import type { RestAnswer, Rest } from '../mcp.rest.ts';

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /** The structured result (also sent as its JSON text); throws ToolError for an answer with `isError`. */
  run(args: Record<string, unknown>, rest: Rest): Promise<Record<string, unknown>>;
}

export type ToolFactory = (catalogue: Catalogue) => Tool;

/** Read-only, and the same answer for the same data: every tool is a GET of the REST API. */
export const ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const DEFAULT_LIMIT = 10;

/** The few fields a list's item shows unless the caller names others: enough to tell records apart and ask for one. */
const DEFAULT_FIELDS: Record<string, readonly string[]> = {
  changes: ['id', 'type', 'key', 'occurred_at'],
  chapters: ['key', 'name'],
  committees: ['key', 'name'],
  deleted: ['resource', 'key', 'deleted_at'],
  events: ['key', 'name', 'start_date', 'end_date'],
  issues: ['title', 'state', 'url'],
  labels: ['name', 'description'],
  members: ['login', 'name'],
  milestones: ['number', 'title', 'state', 'url'],
  organizations: ['login', 'name'],
  projects: ['key', 'name', 'level', 'type'],
  releases: ['name', 'tag_name', 'published_at'],
  repositories: ['name'],
  snapshots: ['key', 'title'],
  sponsors: ['key', 'name', 'sponsor_type'],
};

export const limitSchema = (maximum: number): JsonSchema => ({
  type: 'integer',
  minimum: 1,
  maximum,
  default: DEFAULT_LIMIT,
  description: `Records to return, 1 to ${maximum}; default ${DEFAULT_LIMIT}. Ask for more only when you need them.`,
});

export const cursorSchema: JsonSchema = {
  type: 'string',
  maxLength: 4000,
  description: 'The `next_cursor` of a previous answer with the same other arguments: the page after it.',
};

export const fieldsSchema: JsonSchema = {
  type: 'array',
  items: { type: 'string', minLength: 1, maxLength: 100 },
  maxItems: 50,
  description:
    'The fields of each record to return (unknown names are refused with the list of known ones). Default: a few ' +
    'identifying fields; name the ones you need rather than all.',
};

export const filtersSchema = (described: string): JsonSchema => ({
  type: 'object',
  maxProperties: 30,
  additionalProperties: {
    type: ['string', 'number', 'boolean', 'array'],
    items: { type: ['string', 'number', 'boolean'] },
    maxItems: 20,
  },
  description: `The list's filters as {name: value} (a list of values for a repeatable one). ${described}`,
});

/**
 * `filters` as query parameters: only the list's documented filters (REST drops a parameter it does not know, which
 * would answer another question than the one asked); the tool's own arguments (limit, cursor, ordering, fields,
 * group_by) stay its own.
 */
export function filterParams(entry: ListEntry, filters: unknown, query = new URLSearchParams()): URLSearchParams {
  for (const [name, value] of Object.entries((filters ?? {}) as Record<string, unknown>)) {
    if (RESERVED.has(name))
      throw new ToolError(
        `filters may not set ${name}: use the tool's own arguments (limit, cursor, ordering, fields), or the count tool for group_by`,
      );
    if (!entry.filters.some((filter) => filter.name === name)) {
      const known = entry.filters.map((filter) => filter.name).join(', ') || 'none';
      throw new ToolError(
        `${entry.resource} has no filter ${JSON.stringify(name.slice(0, 60))} (its filters: ${known})`,
      );
    }
    for (const one of [value].flat()) query.append(name, String(one));
  }
  return query;
}

/** The `fields` to ask for: the caller's, else the list's defaults (with `extra`, such as `distance_km`). */
export function fieldsParam(entry: ListEntry, asked: unknown, extra: readonly string[] = []): string | undefined {
  if (Array.isArray(asked)) return asked.join(',');
  if (!entry.takesFields) return undefined;
  const fields = [...(DEFAULT_FIELDS[entry.resource] ?? []), ...extra].filter((name) => entry.fields.includes(name));
  return fields.length > 0 ? fields.join(',') : undefined;
}

/** A page of REST's answer as the tools give it. */
export function pageOf(resource: string, { body, next }: RestAnswer): Record<string, unknown> {
  return { resource, count: body.count, items: body.items, ...(next ? { next_cursor: next } : {}) };
}

/** `name (a|b|c)` for the enums of a description. */
export function named(name: string, values?: readonly string[]): string {
  return values && values.length > 0 ? `${name} (${values.join('|')})` : name;
}
