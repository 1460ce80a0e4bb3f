// JSON nested past MAX_JSON_DEPTH (issue 41, item 4): 30,000 nested arrays fit under MCP's 64 kB body limit and once
// overflowed the stack (a 500, a stack in the log). Refused with a 400 in each endpoint's own shape before anything
// walks them; at the bound, a request is read as before. Secret scanning's raw body: test/secret-scanning.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { arrays, objects } from './nesting.ts';
import { MAX_JSON_DEPTH } from '../src/http/json-nesting.ts';
import { MCP_BODY_LIMIT } from '../src/mcp/mcp.routes.ts';
import { GRAPHQL_BODY_LIMIT } from '../src/graphql/index.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp({ captureLogs: true });
});
after(() => t.close());

const DEEP = 30_000;
/** As deep as fits in a body limit (2 bytes a level of arrays, 5 of objects), at most DEEP. */
const deepest = (limit: number, bytesPerLevel: number) => Math.min(DEEP, Math.floor((limit - 200) / bytesPerLevel));

const post = (url: string, payload: string) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload,
  });

/** No line at error level or above: a client's input is no error of the service. */
const noErrorLogged = () => assert.doesNotMatch(t.logs(), /"level":(50|60)/);

// A tool call is 3 levels (message, params, arguments) around the value of an argument.
const toolCall = (args: string) =>
  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":${args}}}`;

test('MCP: 30,000 nested arrays or 12,000 objects in a message are a JSON-RPC invalid request (400); at the bound, a tool error', async () => {
  const refusal = {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: `Invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` },
  };
  for (const message of [
    toolCall(`{"query":${arrays(DEEP)}}`),
    toolCall(objects(deepest(MCP_BODY_LIMIT, 5))),
    `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":${arrays(DEEP)}}}`,
    toolCall(`{"query":${arrays(MAX_JSON_DEPTH - 2)}}`),
  ]) {
    const res = await post('/mcp', message);
    assert.equal(res.statusCode, 400, res.body.slice(0, 200));
    assert.deepEqual(res.json(), refusal);
  }
  // Exactly at the bound: the call is read and checked as ever, its argument refused by the tool.
  const checked = await post('/mcp', toolCall(`{"query":${arrays(MAX_JSON_DEPTH - 3)}}`));
  assert.equal(checked.statusCode, 200, checked.body);
  assert.deepEqual(checked.json().result, {
    content: [{ type: 'text', text: 'query must be a string' }],
    isError: true,
  });
  // A bracket inside a string is no nesting; the process is up and answers.
  const answered = await post('/mcp', toolCall(`{"query":${JSON.stringify('['.repeat(DEEP))}}`));
  assert.equal(answered.statusCode, 200, answered.body.slice(0, 200));
  assert.equal(answered.json().result.isError, true);
  assert.match(answered.json().result.content[0].text, /query must be at most 200 characters/);
  noErrorLogged();
});

test('GraphQL: variables nested 15,000 arrays or 6,000 objects deep, in a POST or a GET, are a GraphQL error with status 400', async () => {
  const query = 'mutation Revoke($x: UUID!) { revokeApiKey(uuid: $x) { __typename } }';
  const refused = (res: Awaited<ReturnType<typeof post>>, what: string) => {
    assert.equal(res.statusCode, 400, res.body.slice(0, 200));
    assert.deepEqual(res.json(), {
      data: null,
      errors: [{ message: `${what} is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects` }],
    });
  };
  for (const variables of [`{"x":${arrays(deepest(GRAPHQL_BODY_LIMIT, 2))}}`, objects(deepest(GRAPHQL_BODY_LIMIT, 5))])
    refused(await post('/graphql', `{"query":${JSON.stringify(query)},"variables":${variables}}`), 'The JSON body');
  const search = new URLSearchParams({ query, variables: `{"x":${arrays(5_000)}}` });
  refused(await t.app.inject({ method: 'GET', url: `/graphql?${search}` }), 'The query parameter variables');
  // At the bound (body, variables, x's arrays): the variable is refused by its type, as any wrong value is.
  const typed = await post('/graphql', `{"query":${JSON.stringify(query)},"variables":{"x":${arrays(30)}}}`);
  assert.equal(typed.statusCode, 400, typed.body);
  assert.match(typed.json().errors[0].message, /Variable "\$x" got invalid value/);
  const fine = await post('/graphql', JSON.stringify({ query: '{ me { login } }', variables: { x: [[]] } }));
  assert.deepEqual(fine.json(), { data: { me: null } });
  noErrorLogged();
});

test('any other JSON body nested 30,000 deep: 400 in the REST shape, before the route runs', async () => {
  for (const body of [arrays(DEEP), objects(DEEP)]) {
    const res = await post('/auth/logout', body);
    assert.equal(res.statusCode, 400, res.body.slice(0, 200));
    assert.deepEqual(res.json(), {
      message: 'Invalid request',
      errors: [{ loc: ['body'], msg: `is nested deeper than ${MAX_JSON_DEPTH} levels` }],
    });
  }
  // Brackets in a string are not counted, past an escaped quote either; an escaped backslash ends the string.
  const escapedQuote = JSON.stringify({ a: `\\"${'['.repeat(100)}` });
  assert.equal((await post('/auth/logout', escapedQuote)).statusCode, 200);
  const escapedBackslash = `${JSON.stringify({ a: '\\' }).slice(0, -1)},"b":${arrays(MAX_JSON_DEPTH)}}`;
  assert.equal((await post('/auth/logout', escapedBackslash)).statusCode, 400);
  // At the bound the body is read as before (this route ignores it); Fastify's own refusals still hold.
  assert.equal((await post('/auth/logout', arrays(MAX_JSON_DEPTH))).statusCode, 200);
  assert.equal((await post('/auth/logout', '{"__proto__":{"x":1}}')).statusCode, 400);
  assert.equal((await post('/auth/logout', '[[[')).statusCode, 400);
  noErrorLogged();
});
