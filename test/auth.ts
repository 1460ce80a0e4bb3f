// Signing in and calling GraphQL as a browser would: session cookie + CSRF double submit.
import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';

export interface Browser {
  cookies: Record<string, string>;
}

export function cookieHeader(browser: Browser): string {
  return Object.entries(browser.cookies)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
}

/** Keeps the cookies a response sets (and forgets cleared ones), like a browser. */
export function absorb(browser: Browser, setCookie: string | string[] | undefined): void {
  for (const line of [setCookie ?? []].flat()) {
    const [pair] = line.split(';');
    const index = pair!.indexOf('=');
    const name = pair!.slice(0, index);
    const value = pair!.slice(index + 1);
    if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line)) delete browser.cookies[name];
    else browser.cookies[name] = value;
  }
}

export async function devSignIn(t: TestApp, login: string): Promise<Browser> {
  const browser: Browser = { cookies: {} };
  const res = await t.app.inject({ method: 'POST', url: '/auth/dev/login', payload: { login } });
  assert.equal(res.statusCode, 200, res.body);
  absorb(browser, res.headers['set-cookie']);
  assert.ok(browser.cookies.cds_session && browser.cookies.csrftoken);
  return browser;
}

export async function graphql(
  t: TestApp,
  browser: Browser | undefined,
  query: string,
  variables?: Record<string, unknown>,
  options: { csrf?: string | null } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (browser) {
    headers.cookie = cookieHeader(browser);
    const csrf = options.csrf === undefined ? browser.cookies.csrftoken : options.csrf;
    if (csrf !== null && csrf !== undefined) headers['x-csrftoken'] = csrf;
  }
  const res = await t.app.inject({ method: 'POST', url: '/graphql/', headers, payload: { query, variables } });
  if (browser) absorb(browser, res.headers['set-cookie']);
  return res;
}

export const CLIENT_DOCUMENTS = {
  getApiKeys: 'query GetApiKeys { activeApiKeyCount apiKeys { id createdAt expiresAt isRevoked name uuid } }',
  createApiKey:
    'mutation CreateApiKey($name: String!, $expiresAt: DateTime!) { createApiKey(name: $name, expiresAt: $expiresAt) { apiKey { id createdAt expiresAt isRevoked name uuid } code message ok rawKey } }',
  revokeApiKey: 'mutation RevokeApiKey($uuid: UUID!) { revokeApiKey(uuid: $uuid) { code message ok } }',
};

export const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** A signed-in browser of a service process started by the test (test/process.ts), seen from outside over HTTP. */
export interface ProcessSession {
  cookies: string;
  csrf: string;
}

/** POSTs a GraphQL document to the process at `base` as `session`; gives back the parsed body. */
export async function graphqlOver<T>(
  base: string,
  session: ProcessSession,
  query: string,
  variables: Record<string, unknown>,
): Promise<{ data: T }> {
  const res = await fetch(`${base}/graphql/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: session.cookies, 'x-csrftoken': session.csrf },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data: T };
}

/** Signs `login` in at the process at `base` (AUTH_DEV_LOGIN) and creates a key of a day through GraphQL. */
export async function newKeyOver(
  base: string,
  login: string,
  name: string,
): Promise<ProcessSession & { raw: string; uuid: string }> {
  const signIn = await fetch(`${base}/auth/dev/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login }),
  });
  const cookies = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const session = { cookies, csrf: /csrftoken=([^;]+)/.exec(cookies)![1]! };
  const { data } = await graphqlOver<{ createApiKey: { rawKey: string; apiKey: { uuid: string } } }>(
    base,
    session,
    CLIENT_DOCUMENTS.createApiKey,
    { name, expiresAt: inDays(1) },
  );
  return { ...session, raw: data.createApiKey.rawKey, uuid: data.createApiKey.apiKey.uuid };
}

/** Revokes `key` through GraphQL at the process at `base`, as its owner; gives back the mutation's `ok`. */
export async function revokeOver(base: string, key: ProcessSession & { uuid: string }): Promise<boolean> {
  const { data } = await graphqlOver<{ revokeApiKey: { ok: boolean } }>(base, key, CLIENT_DOCUMENTS.revokeApiKey, {
    uuid: key.uuid,
  });
  return data.revokeApiKey.ok;
}

/** A REST read of the process at `base` with an API key. */
export const readOver = (base: string, key: string, url = '/api/v0/chapters/?limit=1') =>
  fetch(`${base}${url}`, { headers: { 'x-api-key': key } });
