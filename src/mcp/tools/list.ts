// `list`: any list of the REST API with its documented filters, ordering, fields and cursor.
import { API_PREFIX, type ListEntry } from '../mcp.catalogue.ts';
import {
  ANNOTATIONS,
  cursorSchema,
  fieldsParam,
  fieldsSchema,
  filterParams,
  filtersSchema,
  limitSchema,
  named,
  pageOf,
  type ToolFactory,
} from './tool.ts';

/** One line per list: its filters, with their values where they are few. */
export const filtersOf = (entries: ListEntry[]) =>
  entries
    .map(({ resource, filters }) =>
      filters.length > 0
        ? `${resource}: ${filters.map((f) => named(f.name, f.values)).join(', ')}`
        : `${resource}: none`,
    )
    .join('; ');

export const listTool: ToolFactory = (catalogue) => {
  const entries = [...catalogue.lists.values()];
  return {
    name: 'list',
    title: 'List OWASP community records',
    description:
      'A page of one kind of record, filtered and ordered: chapters of a country, flagship projects, open issues of a ' +
      'repository, upcoming events. Answers `count` (all matching records), `items` (a few fields each unless you ask ' +
      'for `fields`) and `next_cursor` when more follow: pass it as `cursor` with the same other arguments for the next ' +
      'page. To know how many records have each value of a field, use `count`; to find a record by name, `search`; ' +
      'for places near a point, `nearest`. Filters by resource: ' +
      filtersOf(entries) +
      '. `q` (chapters, projects, repositories) is a structured search such as `level:flagship` or `stars:>100`; ' +
      '`updated_after`/`updated_before` take ISO 8601 date-times with a zone.',
    inputSchema: {
      type: 'object',
      properties: {
        resource: { type: 'string', enum: entries.map((e) => e.resource), description: 'The kind of record.' },
        filters: filtersSchema('Unknown names and invalid values are refused with the reason.'),
        ordering: {
          type: 'string',
          maxLength: 200,
          description: 'A field to order by, `-` first for descending (`-updated_at`); several comma-separated.',
        },
        limit: limitSchema(100),
        cursor: cursorSchema,
        fields: fieldsSchema,
      },
      required: ['resource'],
      additionalProperties: false,
    },
    annotations: ANNOTATIONS,
    async run(args, rest) {
      const entry = catalogue.lists.get(String(args.resource))!;
      const query = filterParams(entry, args.filters);
      if (args.ordering !== undefined) query.set('ordering', String(args.ordering));
      query.set('limit', String(args.limit ?? 10));
      if (args.cursor !== undefined) query.set('cursor', String(args.cursor));
      const fields = fieldsParam(entry, args.fields);
      if (fields) query.set('fields', fields);
      return pageOf(entry.resource, await rest(`${API_PREFIX}/${entry.resource}/`, query));
    },
  };
};
