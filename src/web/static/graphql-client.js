/* global fetch */
// The page's only way to the server: GraphQL with the session cookie and the CSRF double submit.

export const DOCUMENTS = {
  getApiKeys: 'query GetApiKeys { activeApiKeyCount apiKeys { id createdAt expiresAt isRevoked name uuid } }',
  // Separate from GetApiKeys so that document stays exactly the client's.
  keyUsage: 'query ApiKeyUsage { apiKeys { uuid lastUsedAt expiresSoon } }',
  leakedApiKeys: 'query LeakedApiKeys { leakedApiKeys { uuid name leakUrl leakReportedAt } }',
  rotateApiKey:
    'mutation RotateApiKey($uuid: UUID!, $hours: Int!) { rotateApiKey(uuid: $uuid, gracePeriodHours: $hours) { apiKey { name uuid expiresAt } code message ok rawKey } }',
  createApiKey:
    'mutation CreateApiKey($name: String!, $expiresAt: DateTime!) { createApiKey(name: $name, expiresAt: $expiresAt) { apiKey { id createdAt expiresAt isRevoked name uuid } code message ok rawKey } }',
  revokeApiKey: 'mutation RevokeApiKey($uuid: UUID!) { revokeApiKey(uuid: $uuid) { code message ok } }',
};

export class UiError extends Error {
  constructor(code, detail) {
    super(detail || code);
    this.code = code;
  }
}

let csrf;

async function fetchCsrfToken() {
  let response;
  try {
    response = await fetch('/csrf/', { cache: 'no-store', credentials: 'same-origin' });
  } catch {
    throw new UiError('NETWORK');
  }
  if (!response.ok) throw new UiError('HTTP', `HTTP ${response.status}`);
  return (await response.json()).csrftoken;
}

/** Every POST with the session cookie must repeat the csrftoken cookie; mutations always ask afresh.
 * `headers`: more headers to send (GraphiQL's header editor); the CSRF and content type headers win. */
export async function post(url, body, { freshToken = false, headers: extra = {} } = {}) {
  if (freshToken || !csrf) csrf = fetchCsrfToken();
  let token;
  try {
    token = await csrf;
  } catch (error) {
    csrf = undefined;
    throw error;
  }
  // Ours replace any of the same name, whatever its case (a Headers object would join both values).
  const headers = Object.fromEntries(
    Object.entries(extra).filter(([name]) => !['x-csrftoken', 'content-type'].includes(name.toLowerCase())),
  );
  headers['x-csrftoken'] = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new UiError('NETWORK');
  }
}

export async function graphql(query, variables, options) {
  const response = await post('/graphql/', variables ? { query, variables } : { query }, options);
  if (response.status === 403) {
    csrf = undefined;
    throw new UiError('FORBIDDEN');
  }
  let body;
  try {
    body = await response.json();
  } catch {
    throw new UiError('HTTP', `HTTP ${response.status}`);
  }
  const error = body.errors && body.errors[0];
  if (error) throw new UiError((error.extensions && error.extensions.code) || 'GRAPHQL', error.message);
  if (!response.ok || !body.data) throw new UiError('HTTP', `HTTP ${response.status}`);
  return body.data;
}
