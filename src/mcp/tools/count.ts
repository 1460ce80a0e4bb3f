// `count`: how many records of a list have each value of a field (REST's `group_by`), for the same filters as `list`.
import { API_PREFIX } from '../mcp.catalogue.ts';
import { ANNOTATIONS, filterParams, filtersSchema, type ToolFactory } from './tool.ts';
import { filtersOf } from './list.ts';

export const countTool: ToolFactory = (catalogue) => {
  const entries = [...catalogue.lists.values()].filter((e) => e.groupBy.length > 0);
  const fields = [...new Set(entries.flatMap((e) => e.groupBy))].sort();
  return {
    name: 'count',
    title: 'Count OWASP community records by a field',
    description:
      'How many records have each value of one field, for the same filters as `list`: projects per level, chapters ' +
      'per country, issues per state. Answers `groups` ([{value, count}], largest first; `null` is the records ' +
      'without a value) and `count`, the total. One question, one call: no paging. Fields by resource: ' +
      entries.map((e) => `${e.resource}: ${e.groupBy.join(', ')}`).join('; ') +
      '. Filters by resource: ' +
      filtersOf(entries) +
      '.',
    inputSchema: {
      type: 'object',
      properties: {
        resource: { type: 'string', enum: entries.map((e) => e.resource), description: 'The kind of record.' },
        group_by: { type: 'string', enum: fields, description: 'The field to count by (see the fields by resource).' },
        filters: filtersSchema('The same as those of `list`.'),
      },
      required: ['resource', 'group_by'],
      additionalProperties: false,
    },
    annotations: ANNOTATIONS,
    async run(args, rest) {
      const entry = catalogue.lists.get(String(args.resource))!;
      const query = filterParams(entry, args.filters);
      query.set('group_by', String(args.group_by));
      const { body } = await rest(`${API_PREFIX}/${entry.resource}/`, query);
      return { resource: entry.resource, group_by: body.group_by, groups: body.groups, count: body.count };
    },
  };
};
