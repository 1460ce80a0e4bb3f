// GET /llms.txt (https://llmstxt.org): a short guide for agents and the people who set them up: what the data is,
// where the API and the MCP endpoint are, keys, and how to read lists without wasting requests. Public; the base URL
// is PUBLIC_URL, else the request's own host.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { RESOURCES } from '../api/v0/resources.ts';
import { MCP_PATH } from './mcp.routes.ts';
import { memoize } from '../memo.ts';

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function llmsTxtRoute(app: FastifyInstance): void {
  const textOf = memoize(20, (base) => llmsTxt(base, app.config));
  const baseOf = (request: FastifyRequest): string => {
    if (app.config.publicUrl) return app.config.publicUrl.replace(/\/+$/, '');
    return HOST.test(request.host) ? `${request.protocol}://${request.host}` : '';
  };
  app.get('/llms.txt', { schema: { hide: true }, config: { offers: ['text/plain'] } }, async (request, reply) => {
    return reply
      .type('text/plain; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(textOf(baseOf(request)));
  });
}

export function llmsTxt(base: string, config: Config): string {
  const api = `${base}/api/v0`;
  const limit = config.rateLimitPerSecond;
  const keys =
    config.restAuth === 'required'
      ? 'Every call to the API and to the MCP endpoint needs a personal key in the `X-API-Key` header; without one the answer is 401.'
      : 'This instance also answers without a key (anonymous reads, limited per client address); a key in `X-API-Key` gets its own limit.';
  const lists = RESOURCES.map((r) => `- [${r.name}](${api}/${r.name}/)`).join('\n');
  return `# OWASP community data

> The public, read-only API of the OWASP community's data: chapters, committees, events, projects and sponsors from the OWASP website, and the GitHub organizations, members, repositories, issues, labels, milestones and releases it mirrors. JSON over HTTP (REST), and the same data as Model Context Protocol tools.

- REST API: ${api}/ (OpenAPI 3.1 document: ${api}/openapi.json; human documentation: ${api}/docs)
- MCP endpoint: ${base}${MCP_PATH} (Streamable HTTP, POST, JSON answers, no session)
- Search: ${api}/search/?q=juice%20shop

## API keys

${keys} A person gets a key on ${base}/settings/api-keys (sign in, create a key, copy it once), or from the operator (\`cds users create LOGIN --key NAME\`). Keep the key in your client's configuration, never in a prompt, a URL or a log.

## MCP

Tools: \`search\` (find by name), \`get\` (one whole record), \`list\` (filter and page a list), \`count\` (records per value of a field), \`nearest\` (chapters or events near a place), \`changes\` (what was created, updated or deleted, oldest first), \`contribute\` (open, unassigned issues labelled for newcomers). Every tool is read-only and answers small by default (ask for \`fields\` and \`limit\`). Each POST counts as one request against your key's limit. Client configuration (Claude Desktop, VS Code and others):

\`\`\`json
{"mcpServers": {"owasp": {"type": "http", "url": "${base}${MCP_PATH}", "headers": {"X-API-Key": "YOUR_KEY"}}}}
\`\`\`

## Reading the REST API

- Lists: \`GET ${api}/{resource}/\` with the filters of each list (see the OpenAPI document), \`ordering\`, and \`limit\` (1 to 100). The answer has \`items\` and \`count\`.
- Paging: follow the \`Link\` header's \`rel="next"\` URL, which carries a \`cursor\`; a cursor reads the next page by seeking, whatever its depth. Do not step through deep page numbers.
- \`fields=key,name\` on every list and detail: only those fields, a smaller and faster answer.
- \`near=LAT,LON\` (and \`radius_km\`) on chapters and events: nearest first, each item with \`distance_km\`.
- \`group_by=FIELD\` on a list: \`{"group_by", "groups": [{"value", "count"}], "count"}\` for the same filters, in one request.
- Details: \`GET ${api}/{resource}/{id}\` (\`chapters/london\`, \`repositories/OWASP/Nest\`, \`issues/OWASP/Nest/123\`); \`search\` gives these ids.
- Changes since a date: \`updated_after=2026-01-01T00:00:00Z&ordering=updated_at\` on the lists that have \`updated_at\`, and \`${api}/deleted/\` for what left them.

Lists:

${lists}

## Mistakes to avoid

- Paging through a whole list to count or to find one record: use \`group_by\`, a filter, or \`search\`.
- More than ${limit} requests a second per key (per address without one): the answer is 429 with \`Retry-After\`; wait that many seconds before the next request, do not retry at once or in parallel.
- Deep page numbers (\`page=400\`): use the \`cursor\` of the \`next\` link.
- Asking for every field of every record: name the \`fields\` you need.
- Guessing ids: take them from \`search\` or from a list's \`key\`/\`login\`.
- Re-reading unchanged data: send the \`ETag\` back in \`If-None-Match\` and get 304.

Data © OWASP Foundation and the contributors to OWASP/owasp.github.io (CC BY-SA 4.0).
`;
}
