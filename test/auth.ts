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
