// POST /mcp: the Model Context Protocol over Streamable HTTP, stateless, one JSON answer per request (no SSE stream,
// no session). The REST API's key and limit: the key is checked before the body is read, as REST checks it, and each
// POST counts once against the limit: a tool call by the REST request it makes (mcp.rest.ts), any other message (or a
// tool call refused before it reaches REST) by the same gate. docs/decisions.md, "mcp".
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { Gate } from '../access/gate.ts';
import { keyExpirationHeader } from '../access/authenticate.ts';
import { negotiate } from '../http/negotiate.ts';
import { NotAcceptableError } from '../errors.ts';
import { createMethods } from './mcp.methods.ts';
import {
  answerBytes,
  checkVersionHeader,
  errorBody,
  readMessage,
  RequestError,
  resultBody,
  type Message,
} from './mcp.protocol.ts';
import { restFor, type Rest } from './mcp.rest.ts';
import type { ToolResults } from './mcp.results.ts';
import { takeEarlyBody } from './mcp.early.ts';

export const MCP_PATH = '/mcp';
/** A message is a few hundred bytes; a tool's arguments at most a few kB. */
export const MCP_BODY_LIMIT = 64 * 1024;
const JSON_TYPE = 'application/json';

export interface McpOptions {
  gate: Gate;
  /** The kept answers of tool calls, shared with the early answers (mcp.early.ts). */
  results: ToolResults;
}

export function mcpRoutes(app: FastifyInstance, { gate, results }: McpOptions): void {
  const methods = createMethods(app);
  const origins = app.config.corsOrigins;

  // The body as text: a body that is not JSON is JSON-RPC's parse error, not REST's 400.
  app.removeContentTypeParser(JSON_TYPE);
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'string' }, (_request, body, done) => done(null, body));

  const count = async (request: FastifyRequest, reply: FastifyReply) => {
    const limiting = gate.limit(request, reply);
    if (limiting) await limiting;
  };

  app.post(
    MCP_PATH,
    {
      bodyLimit: MCP_BODY_LIMIT,
      schema: { hide: true },
      onRequest: async (request, reply) => {
        // DNS rebinding (the specification's rule): with a list of origins, a page of another one is refused.
        const origin = request.headers.origin;
        if (origin !== undefined && !origins.includes('*') && !origins.includes(origin))
          throw new AppError(403, { message: 'Origin not allowed' });
        const authenticating = gate.authenticate(request);
        if (authenticating) await authenticating;
        keyExpirationHeader(request, reply);
      },
      // A body the early answers read before handing the request on (mcp.early.ts) is read from what they kept.
      preParsing: async (request, _reply, payload) => takeEarlyBody(request.raw) ?? payload,
    },
    async (request, reply) => {
      let message: Message;
      try {
        if (negotiate(request.headers.accept, [JSON_TYPE]) === undefined) throw new NotAcceptableError([JSON_TYPE]);
        checkVersionHeader(request.headers['mcp-protocol-version']);
        message = readMessage(typeof request.body === 'string' ? request.body : '');
      } catch (error) {
        // A message refused as such counts too (past the limit, the 429 is the answer).
        await count(request, reply);
        throw error;
      }
      if (message.kind !== 'request') {
        await count(request, reply);
        return reply.code(202).send();
      }
      reply.type(`${JSON_TYPE}; charset=utf-8`);
      if (message.method !== 'tools/call') {
        await count(request, reply);
        try {
          return resultBody(message.id, JSON.stringify(methods.answer(message.method, message.params)));
        } catch (error) {
          if (!(error instanceof RequestError)) throw error;
          return errorBody(message.id, error.code, error.message);
        }
      }
      // A call answered before under this data version: counted by the gate, as its REST request would be.
      const key = results.keyOf(message.params.name, message.params.arguments);
      if (key !== undefined && results.get(key) !== undefined) {
        await count(request, reply);
        // Read again: counting may have noticed a change of the data, which empties them (the call is then made, and its
        // REST request counted too: a second count only when the data changes in between).
        const kept = results.get(key);
        if (kept !== undefined) return answerBytes(JSON.stringify(message.id), kept);
      }
      let counted = false;
      const rest = restFor(app, request, reply);
      const once: Rest = (path, query) => ((counted = true), rest(path, query));
      const version = results.version;
      try {
        const { result, refused } = await methods.callTool(message.params, once);
        if (!counted) await count(request, reply);
        const json = JSON.stringify(result);
        if (key !== undefined && !refused) results.set(key, json, version);
        return resultBody(message.id, json);
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        if (!counted) await count(request, reply);
        return errorBody(message.id, error.code, error.message);
      }
    },
  );

  // No SSE stream to open (GET) and no session to end (DELETE): every other method is 405.
  app.route({
    method: ['GET', 'HEAD', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
    url: MCP_PATH,
    schema: { hide: true },
    handler: () => Promise.reject(new AppError(405, { message: 'Method not allowed' }, { allow: 'POST' })),
  });
}
