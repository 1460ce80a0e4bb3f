// What the tools may ask the REST API, read from its own OpenAPI document once the routes are known: each list with
// its filters, `group_by` fields and item fields, each detail with its path parameters. The tools' enums and
// descriptions follow the REST API as it is, so a filter or a resource added there is offered here unchanged.
import { SEARCH_RESOURCES } from '../api/v0/search/search.queries.ts';
import { NEAR_FIELD } from '../api/v0/common/near.ts';
import { RESOURCES } from '../api/v0/resources.ts';

type Schema = Record<string, unknown>;

export interface Filter {
  name: string;
  description: string;
  values?: string[];
}

export interface ListEntry {
  resource: string;
  summary: string;
  /** The query parameters a caller may set through `filters` (not paging, ordering, fields or group_by). */
  filters: Filter[];
  /** The fields of an item (with `near`, `distance_km` too). */
  fields: string[];
  groupBy: string[];
  orderings: string[];
  near: boolean;
  /** Whether the list takes `fields`. */
  takesFields: boolean;
}

export interface DetailEntry {
  resource: string;
  /** The path parameters, in order (`organization_id`, `repository_id`, `issue_id`). */
  params: string[];
  fields: string[];
  takesFields: boolean;
}

export interface Catalogue {
  lists: Map<string, ListEntry>;
  details: Map<string, DetailEntry>;
  searchResources: string[];
}

export const API_PREFIX = '/api/v0';
const SEARCH_PATH = `${API_PREFIX}/search/`;

/** Parameters the tools set from their own arguments: `filters` may not name them. */
export const RESERVED = new Set(['page', 'page_size', 'limit', 'cursor', 'ordering', 'fields', 'group_by', 'format']);

interface Parameter {
  name: string;
  in: string;
  description?: string;
  schema?: Schema;
}

export function readCatalogue(document: { paths?: Record<string, unknown>; components?: { schemas?: Schema } }) {
  const components = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const resolve = (schema: unknown): Schema | undefined => {
    const s = schema as Schema | undefined;
    const ref = typeof s?.$ref === 'string' ? s.$ref.split('/').pop()! : undefined;
    return ref ? components[ref] : s;
  };
  const registered = new Set(RESOURCES.map((r) => r.name));
  const catalogue: Catalogue = { lists: new Map(), details: new Map(), searchResources: [...SEARCH_RESOURCES] };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const get = (item as { get?: Schema }).get;
    if (!get || !path.startsWith(`${API_PREFIX}/`)) continue;
    const parameters = ((get.parameters ?? []) as Parameter[]).map((p) => ({ ...p, schema: resolve(p.schema) ?? {} }));
    const query = parameters.filter((p) => p.in === 'query');
    const segments = path.slice(API_PREFIX.length + 1).split('/');
    const resource = segments[0]!;
    // The registry's resources (api/v0/resources.ts), not the other documented operations (search has its tool).
    if (path === SEARCH_PATH || !registered.has(resource)) continue;
    const answer = resolve(
      (get.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>)?.['200']?.content?.[
        'application/json'
      ]?.schema,
    );
    const params = segments.slice(1).filter((s) => /^\{.+\}$/.test(s));
    if (segments.length === 2 && segments[1] === '') {
      const values = (name: string) => enumOf(query.find((p) => p.name === name)?.schema);
      const near = query.some((p) => p.name === 'near');
      catalogue.lists.set(resource, {
        resource,
        summary: String(get.description ?? get.summary ?? ''),
        filters: query
          .filter((p) => !RESERVED.has(p.name))
          .map((p) => ({
            name: p.name,
            description: p.description ?? String(p.schema?.description ?? ''),
            ...(enumOf(p.schema) ? { values: enumOf(p.schema)! } : {}),
          })),
        fields: [...Object.keys(pageItem(answer, resolve)?.properties ?? {}), ...(near ? [NEAR_FIELD] : [])],
        groupBy: values('group_by') ?? [],
        orderings: values('ordering') ?? [],
        near,
        takesFields: query.some((p) => p.name === 'fields'),
      });
    } else if (params.length === segments.length - 1) {
      const fields = Object.keys((answer?.properties as Schema | undefined) ?? {});
      catalogue.details.set(resource, {
        resource,
        params: params.map((p) => p.slice(1, -1)),
        fields,
        takesFields: query.some((p) => p.name === 'fields'),
      });
    }
  }
  return catalogue;
}

function enumOf(schema: Schema | undefined): string[] | undefined {
  const values = (schema?.enum ?? (schema?.items as Schema | undefined)?.enum) as unknown[] | undefined;
  return values?.map(String);
}

/** The item schema of a list's page (the answer may be a page or, with `group_by`, its groups). */
function pageItem(answer: Schema | undefined, resolve: (s: unknown) => Schema | undefined): Schema | undefined {
  const choices = [answer, ...(((answer?.oneOf ?? answer?.anyOf) as unknown[] | undefined) ?? [])].map(resolve);
  for (const choice of choices) {
    const items = (choice?.properties as Record<string, Schema> | undefined)?.items;
    if (items) return resolve(items.items);
  }
  return undefined;
}
