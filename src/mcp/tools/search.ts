// `search`: the REST API's ranked search across resources (GET /api/v0/search/), each result named by the resource
// and id that `get` takes.
import { API_PREFIX } from '../mcp.catalogue.ts';
import { ANNOTATIONS, cursorSchema, limitSchema, type ToolFactory } from './tool.ts';

export const searchTool: ToolFactory = (catalogue) => ({
  name: 'search',
  title: 'Search OWASP community data',
  description:
    'Find records by name or description, the way a person types: words, part of a name, an acronym, a typo ' +
    '("juise shop", "asvs", "londn"), any case and accents. Searches chapters, committees, events, projects, sponsors, ' +
    'GitHub members, organizations, repositories and issues at once, best match first. Each result gives `resource` ' +
    'and `id`: pass them to `get` for the whole record. Use `list` or `count` instead to filter by a field (a country, ' +
    'a level, a state).',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 200, description: 'What to look for.' },
      resource: {
        type: 'string',
        enum: catalogue.searchResources,
        description: 'Only this kind of record. Default: all.',
      },
      limit: limitSchema(50),
      cursor: cursorSchema,
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: ANNOTATIONS,
  async run(args, rest) {
    const query = new URLSearchParams({ q: String(args.query) });
    if (args.resource !== undefined) query.set('resource', String(args.resource));
    query.set('limit', String(args.limit ?? 10));
    if (args.cursor !== undefined) query.set('cursor', String(args.cursor));
    const { body, next } = await rest(`${API_PREFIX}/search/`, query);
    const items = (body.items as Record<string, unknown>[]).map(({ resource, id, name }) => ({ resource, id, name }));
    return { query: args.query, count: body.count, items, ...(next ? { next_cursor: next } : {}) };
  },
});
