// The JSON-RPC methods of the endpoint: initialize, ping, tools/list and tools/call. Nothing else is offered (no
// resources, prompts, logging or sampling), so the server's capabilities name the tools alone.
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../version.ts';
import { readCatalogue } from './mcp.catalogue.ts';
import { check, ToolError } from './mcp.input.ts';
import { INVALID_PARAMS, METHOD_NOT_FOUND, negotiateVersion, RequestError } from './mcp.protocol.ts';
import type { Rest } from './mcp.rest.ts';
import type { Tool } from './tools/tool.ts';
import { searchTool } from './tools/search.ts';
import { listTool } from './tools/list.ts';
import { getTool } from './tools/get.ts';
import { nearestTool } from './tools/nearest.ts';
import { countTool } from './tools/count.ts';
import { changesTool } from './tools/changes.ts';
import { contributeTool } from './tools/contribute.ts';

const INSTRUCTIONS =
  'OWASP community data: chapters, committees, events, projects and sponsors from the OWASP website, and the GitHub ' +
  'organizations, members, repositories, issues, labels, milestones and releases it mirrors. Find a record by name ' +
  'with `search`, read it whole with `get`; filter and page with `list`; count by a field with `count`; find ' +
  'chapters or events near a place with `nearest`; what changed with `changes`; open issues a newcomer can take with `contribute`. Answers are small by default: name the `fields` you need. Every ' +
  'call counts against your API key’s rate limit (a few requests a second): prefer `count` to paging through a ' +
  'list, and follow `next_cursor` only as far as you need.';

export interface Methods {
  /** The result of a request other than tools/call; RequestError for an unknown method or invalid parameters. */
  answer(method: string, params: Record<string, unknown>): unknown;
  /** A tool's result; its refusals (ToolError) are results with `isError` (`refused`). */
  callTool(params: Record<string, unknown>, rest: Rest): Promise<{ result: unknown; refused: boolean }>;
}

export function createMethods(app: FastifyInstance): Methods {
  // Built on first use from the OpenAPI document: every route is known by then, and an app that never serves MCP
  // (a `cds` command) never builds it.
  let built: { tools: Map<string, Tool>; list: unknown } | undefined;
  const tools = () => {
    if (!built) {
      const catalogue = readCatalogue(app.swagger() as Parameters<typeof readCatalogue>[0]);
      const all = [searchTool, listTool, getTool, nearestTool, countTool, changesTool, contributeTool].map((make) =>
        make(catalogue),
      );
      built = {
        tools: new Map(all.map((tool) => [tool.name, tool])),
        list: { tools: all.map(({ run: _run, ...described }) => described) },
      };
    }
    return built;
  };

  return {
    answer(method, params) {
      if (method === 'initialize') {
        if (typeof params.protocolVersion !== 'string')
          throw new RequestError(INVALID_PARAMS, 'Invalid params: protocolVersion is required');
        return {
          protocolVersion: negotiateVersion(params.protocolVersion),
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'owasp-community-data', title: 'OWASP community data', version: VERSION },
          instructions: INSTRUCTIONS,
        };
      }
      if (method === 'ping') return {};
      if (method === 'tools/list') return tools().list;
      throw new RequestError(METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 100)}`);
    },

    async callTool(params, rest) {
      const { name, arguments: args = {} } = params;
      const tool = typeof name === 'string' ? tools().tools.get(name) : undefined;
      if (!tool) throw new RequestError(INVALID_PARAMS, `Unknown tool: ${String(name).slice(0, 100)}`);
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw new RequestError(INVALID_PARAMS, 'Invalid params: arguments must be an object');
      try {
        check(tool.inputSchema, args, '');
        const structured = await tool.run(args as Record<string, unknown>, rest);
        const text = JSON.stringify(structured);
        return { result: { content: [{ type: 'text', text }], structuredContent: structured }, refused: false };
      } catch (error) {
        if (!(error instanceof ToolError)) throw error;
        return { result: { content: [{ type: 'text', text: error.message }], isError: true }, refused: true };
      }
    },
  };
}
