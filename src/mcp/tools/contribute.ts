// `contribute`: where a newcomer can help, REST's GET /api/v0/contribute/ (open, unassigned issues with a beginner
// label in the repositories of active projects), narrowed by language, project and level.
import { API_PREFIX } from '../mcp.catalogue.ts';
import { ANNOTATIONS, cursorSchema, limitSchema, pageOf, type ToolFactory } from './tool.ts';

const RESOURCE = 'contribute';

export const contributeTool: ToolFactory = (catalogue) => {
  const entry = catalogue.lists.get(RESOURCE);
  const levels = entry?.filters.find((f) => f.name === 'level')?.values ?? [];
  return {
    name: 'contribute',
    title: 'Find OWASP issues a newcomer can help with',
    description:
      'Open issues with no assignee that carry a label for newcomers ("good first issue", "help wanted", ' +
      '"beginner", "easy"…), in the repositories of active OWASP projects, newest first. Each with its title, url, ' +
      "repository, project {key, name, level}, labels and comments_count. Narrow by the repository's `language` " +
      '("Python"), a `project` key ("nest") or a project `level`. Pages like `list` (`next_cursor`).',
    inputSchema: {
      type: 'object',
      properties: {
        language: { type: 'string', minLength: 1, maxLength: 200, description: "The repository's language." },
        project: { type: 'string', minLength: 1, maxLength: 200, description: 'A project key, such as `nest`.' },
        level: { type: 'string', enum: levels, description: 'The project level.' },
        limit: limitSchema(100),
        cursor: cursorSchema,
      },
      additionalProperties: false,
    },
    annotations: ANNOTATIONS,
    async run(args, rest) {
      const query = new URLSearchParams();
      for (const name of ['language', 'project', 'level', 'cursor'] as const)
        if (args[name] !== undefined) query.set(name, String(args[name]));
      query.set('limit', String(args.limit ?? 10));
      return pageOf(RESOURCE, await rest(`${API_PREFIX}/${RESOURCE}/`, query));
    },
  };
};
