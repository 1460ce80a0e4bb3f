/* global document, fetch, React, ReactDOM, GraphiQL */
// The GraphiQL page (/graphiql, outside production). React, ReactDOM and GraphiQL are the UMD builds of their npm
// packages, loaded by the page's deferred scripts before this module runs. Requests go through post() of graphql-client.js:
// same origin, with the session cookie, and the X-CSRFToken header that a signed-in mutation needs.
import { post } from './graphql-client.js';

const inAYear = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10);
const DEFAULT_QUERY = `# GraphQL of the OWASP community data: your account and your API keys.
# Signed in (on the API keys page), try:
#   mutation { createApiKey(name: "graphiql", expiresAt: "${inAYear}T00:00:00Z") { ok code message rawKey } }
{
  me {
    login
  }
}
`;

// GraphiQL's introspection query is 15 levels deep, beyond the depth limit of every GraphQL request (8): the
// fetcher answers it, recognised by the operation name given below, with the server's /graphiql/schema.json.
const INTROSPECTION_NAME = 'GraphiQLSchemaFromServer';
let schema;

async function loadSchema() {
  const response = await fetch('/graphiql/schema.json', { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`The GraphQL schema could not be loaded (HTTP ${response.status}).`);
  return { data: await response.json() };
}

/** GraphiQL's fetcher: one POST per operation. The token is asked for afresh each time, because signing in on
 * another tab replaces the csrftoken cookie. */
async function fetcher(params, options) {
  if (params.operationName === INTROSPECTION_NAME) {
    schema ??= loadSchema().catch((error) => {
      schema = undefined;
      throw error;
    });
    return schema;
  }
  const response = await post('/graphql/', params, { freshToken: true, headers: (options && options.headers) || {} });
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { errors: [{ message: `HTTP ${response.status}: ${text.slice(0, 200)}` }] };
  }
}

ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, { fetcher, introspectionQueryName: INTROSPECTION_NAME, defaultQuery: DEFAULT_QUERY }),
);
document.documentElement.dataset.graphiql = 'ready';
