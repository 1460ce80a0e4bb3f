// `changes`: what changed, from the change log (REST's `GET /api/v0/changes/`, docs/changes.md): the records created,
// updated and deleted, oldest first, of some resources or types, of one record, from a time or after an id.
import { API_PREFIX } from '../mcp.catalogue.ts';
import { ToolError } from '../mcp.input.ts';
import { ANNOTATIONS, limitSchema, type ToolFactory } from './tool.ts';
import { CHANGE_TYPES, RESOURCE_NAMES } from '../../changes/change-log.ts';

const CHANGES = `${API_PREFIX}/changes/`;

export const changesTool: ToolFactory = () => ({
  name: 'changes',
  title: 'What changed in the OWASP community records',
  description:
    'The records created, updated and deleted, oldest first, from the change log: "what changed in project X since ' +
    'Monday", "new releases this week", "which chapters were removed". Each change has `id`, `type` ' +
    '(`chapter.created`, `issue.updated`, `release.deleted`, …), `resource`, `key` (the record' +
    "'s identity), " +
    '`occurred_at`, `changed_fields` (updates) and `url`. Filter by `resource`, by `types`, by one record (`key`, with ' +
    '`resource`), from a time (`since`). Answers `count` and `items`; when more follow, `next_after`: pass it as ' +
    '`after` with the same other arguments. The log keeps a limited time: older asks are refused with the oldest kept.',
  inputSchema: {
    type: 'object',
    properties: {
      resource: { type: 'string', enum: RESOURCE_NAMES, description: 'Only the changes of this kind of record.' },
      key: {
        type: 'string',
        minLength: 1,
        maxLength: 500,
        description:
          "Only the changes of this record (with `resource`): a chapter's or project's `key`, a member's `login`, a " +
          "repository's `owner/name`, an issue's `url`.",
      },
      since: {
        type: 'string',
        maxLength: 40,
        description: 'Only the changes from this time on: an ISO 8601 date-time with a zone (`2026-05-01T00:00:00Z`).',
      },
      types: {
        type: 'array',
        items: { type: 'string', enum: CHANGE_TYPES },
        maxItems: CHANGE_TYPES.length,
        description: 'Only the changes of these types (either): `project.updated`, `release.created`, …',
      },
      after: {
        type: 'integer',
        minimum: 0,
        maximum: 999_999_999_999_999,
        description: 'Only the changes after this id: the `next_after` of a previous answer.',
      },
      limit: limitSchema(100),
    },
    additionalProperties: false,
  },
  annotations: ANNOTATIONS,
  async run(args, rest) {
    if (args.key !== undefined && args.resource === undefined)
      throw new ToolError('`key` names a record of one kind: give `resource` too');
    const query = new URLSearchParams();
    if (args.resource !== undefined) query.set('resource', String(args.resource));
    if (args.key !== undefined) query.set('key', String(args.key));
    if (args.since !== undefined) query.set('since', String(args.since));
    for (const type of (args.types as string[] | undefined) ?? []) query.append('type', type);
    if (args.after !== undefined) query.set('after', String(args.after));
    query.set('limit', String(args.limit ?? 10));
    const { body, next } = await rest(CHANGES, query);
    const items = body.items as { id: number }[];
    const last = items.at(-1)?.id;
    return {
      count: body.count,
      items,
      ...(next !== undefined && last !== undefined ? { next_after: last } : {}),
    };
  },
});
