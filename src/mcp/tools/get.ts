// `get`: one record by its id, as in its REST detail path (`london`, `OWASP/Nest`, `OWASP/Nest/123`).
import { API_PREFIX } from '../mcp.catalogue.ts';
import { ToolError } from '../mcp.input.ts';
import { ANNOTATIONS, fieldsSchema, type ToolFactory } from './tool.ts';

/** A text longer than this is cut unless asked for by `fields` (issue bodies, descriptions): answers stay small. */
export const MAX_TEXT = 1000;

/** `organization/repository/issue` for the path parameters `organization_id`, `repository_id`, `issue_id`. */
const shape = (params: readonly string[]) => params.map((p) => p.replace(/_id$/, '')).join('/');

export const getTool: ToolFactory = (catalogue) => {
  const entries = [...catalogue.details.values()];
  return {
    name: 'get',
    title: 'Get one OWASP community record',
    description:
      'One whole record by its id: a chapter with its leaders and country, a project with its level and leaders, an ' +
      "issue with its body. The id is what `search` gives, or the record's key or login, its parts joined by `/`: " +
      entries.map((e) => `${e.resource}: ${shape(e.params)}`).join('; ') +
      '. Texts longer than ' +
      `${MAX_TEXT} characters are cut (listed in \`truncated_fields\`) unless you ask for them with \`fields\`.`,
    inputSchema: {
      type: 'object',
      properties: {
        resource: { type: 'string', enum: entries.map((e) => e.resource), description: 'The kind of record.' },
        id: {
          type: 'string',
          minLength: 1,
          maxLength: 600,
          description: 'The id: a key or login, or its parts joined by `/` (`OWASP/Nest/123` for an issue).',
        },
        fields: fieldsSchema,
      },
      required: ['resource', 'id'],
      additionalProperties: false,
    },
    annotations: ANNOTATIONS,
    async run(args, rest) {
      const entry = catalogue.details.get(String(args.resource))!;
      const id = String(args.id);
      const parts = id.split('/');
      if (parts.length !== entry.params.length || parts.some((part) => part === '' || part === '.' || part === '..'))
        throw new ToolError(
          `An id of ${entry.resource} has ${entry.params.length === 1 ? 'one part, without /' : `${entry.params.length} parts joined by /`}: ` +
            shape(entry.params),
        );
      const query = new URLSearchParams();
      if (Array.isArray(args.fields)) query.set('fields', args.fields.join(','));
      const path = `${API_PREFIX}/${entry.resource}/${parts.map(encodeURIComponent).join('/')}`;
      const { body } = await rest(path, query);
      const truncated: string[] = [];
      if (!Array.isArray(args.fields)) {
        for (const [name, value] of Object.entries(body)) {
          if (typeof value === 'string' && value.length > MAX_TEXT) {
            body[name] = `${value.slice(0, MAX_TEXT)}…`;
            truncated.push(name);
          }
        }
      }
      return {
        resource: entry.resource,
        id,
        record: body,
        ...(truncated.length ? { truncated_fields: truncated } : {}),
      };
    },
  };
};
