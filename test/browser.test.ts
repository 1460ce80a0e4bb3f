// Test tier: system (drives Chromium): `npm run test:system`, CI.
// The API key page in a real browser (Debian's Chromium driven by playwright-core): sign in through
// the GitHub stand-in, create a key, copy it, use it on the REST API, revoke it, sign out; and a page on
// another origin reading the REST API through CORS.
// Takes a screenshot of the page; with UPDATE_SCREENSHOT=1 it replaces docs/api-keys-page.png (the
// picture in docs/api.md), otherwise it goes to a temporary file so test runs leave the tree clean.
// Never downloads a browser; without Chromium the test fails.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { type Browser, type Page } from 'playwright-core';
import { openChromium, releaseChromium } from './chromium.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { ALICE, startGithubStandIn, githubSignInEnv, type GithubStandIn } from './github-standin.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';

const SCREENSHOT =
  process.env.UPDATE_SCREENSHOT === '1'
    ? fileURLToPath(new URL('../docs/api-keys-page.png', import.meta.url))
    : path.join(os.tmpdir(), `cds-api-keys-page-${process.pid}.png`);
const UNAUTHORIZED = { detail: "Missing or invalid API key in 'X-API-Key' header" };
// Served for the stand-in's avatar address, which is not a real host.
const AVATAR =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><rect width="40" height="40" fill="#6d5bd0"/>' +
  '<circle cx="20" cy="15" r="7" fill="#fff"/><path d="M7 38c1-8 6-12 13-12s12 4 13 12z" fill="#fff"/></svg>';

let github: GithubStandIn | undefined;
let t: TestApp | undefined;
let browser: Browser | undefined;
let origin = '';

before(async () => {
  github = await startGithubStandIn();
  github.user = ALICE;
  t = await buildTestApp({
    env: {
      REST_AUTH: 'required',
      ...githubSignInEnv(github),
    },
  });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await openChromium();
});

after(async () => {
  await releaseChromium(browser);
  await t?.close();
  await github?.close();
});

/** Calls the REST API from inside the page, as a script on the site would. */
function callApi(page: Page, key: string) {
  return page.evaluate(async (apiKey) => {
    const response = await fetch('/api/v0/chapters/', { headers: { 'X-API-Key': apiKey } });
    return { status: response.status, body: (await response.json()) as unknown };
  }, key);
}

test('sign in with GitHub, create a key, copy it, use it, revoke it, sign out', async () => {
  assert.ok(browser && t);
  const context = await browser.newContext({
    viewport: { width: 1100, height: 800 },
    locale: 'en-US',
    timezoneId: 'UTC',
    colorScheme: 'light',
  });
  try {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await context.route('https://avatars.example/**', (route) =>
      route.fulfill({ contentType: 'image/svg+xml', body: AVATAR }),
    );
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });

    await page.goto(`${origin}/settings/api-keys`);
    await page.getByRole('link', { name: 'Sign in with GitHub' }).click();
    // Our login route → the stand-in's authorize page → our callback → back to this page.
    await page.waitForURL(`${origin}/settings/api-keys`);
    await page.getByText('Alice Example').waitFor();
    await page.getByText('You have 0 of 3 active keys.').waitFor();
    assert.ok(github!.requests.includes('POST /login/oauth/access_token'), 'the code was exchanged at the stand-in');

    await page.getByLabel('Name', { exact: true }).fill('browser test');
    await page.getByLabel('Expires', { exact: true }).selectOption('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const keyField = page.getByLabel('API key', { exact: true });
    await keyField.waitFor();
    const rawKey = await keyField.inputValue();
    assert.match(rawKey, /^cds_[A-Za-z0-9_-]{49}$/);
    assert.equal(await keyField.getAttribute('readonly'), '');
    await page.getByText('it will not be shown again').first().waitFor();
    assert.equal(
      await page.getByLabel('Try it').inputValue(),
      `curl -H "X-API-Key: ${rawKey}" ${origin}/api/v0/chapters/`,
    );

    await page.getByText('You have 1 of 3 active keys.').waitFor();
    const row = page.getByRole('row', { name: /browser test/ });
    const cells = await row.locator('th, td').allInnerTexts();
    const inDays = (days: number) =>
      new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(
        new Date(Date.now() + days * 86_400_000),
      );
    assert.deepEqual(cells.slice(0, 4), ['browser test', inDays(0), inDays(30), 'never']);
    const stored = await t.database.db
      .selectFrom('api_keys')
      .select('expires_at')
      .where('name', '=', 'browser test')
      .executeTakeFirstOrThrow();
    const days = (new Date(stored.expires_at).getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);

    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), rawKey);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    assert.ok(statSync(SCREENSHOT).size > 10_000, 'the screenshot shows a page');
    if (process.env.UPDATE_SCREENSHOT !== '1') rmSync(SCREENSHOT);

    const allowed = await callApi(page, rawKey);
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));

    await row.getByRole('button', { name: /^Revoke/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /“browser test”/);
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Key “browser test” revoked.').waitFor();
    await page.getByText('You have 0 of 3 active keys.').waitFor();
    assert.equal(await row.count(), 0);

    const refused = await callApi(page, rawKey);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, UNAUTHORIZED);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with GitHub' }).waitFor();
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a page on another origin reads the API with an X-API-Key (CORS), but cannot use the signed-in routes', async () => {
  assert.ok(browser && t);
  const user = await upsertLocalUser(t.database.db, 'cross-origin');
  const created = await createApiKey(t.database.db, user.id, 'cross-origin', new Date(Date.now() + 86_400_000));
  assert.ok(created.ok);
  // A second local server on another port: another origin, as another site would be.
  const site = http.createServer((_request, response) => {
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>another site</title><p>elsewhere</p>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  assert.notEqual(siteOrigin, origin);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${siteOrigin}/`);
    const result = await page.evaluate(
      async ({ api, key }) => {
        const response = await fetch(`${api}/api/v0/chapters/?limit=1`, { headers: { 'X-API-Key': key } });
        const body = (await response.json()) as { items: unknown[]; count: number };
        // The same page again: a cached hit the server answers before routing; the page reads the same fields.
        const fields = (r: Response) =>
          ['ratelimit-remaining', 'ratelimit', 'ratelimit-policy', 'api-key-expiration', 'x-request-id'].map(
            (name) => r.headers.get(name) !== null,
          );
        const again = await fetch(`${api}/api/v0/chapters/?limit=1`, { headers: { 'X-API-Key': key } });
        const refused = await fetch(`${api}/api/v0/chapters/`, { headers: { 'X-API-Key': 'wrong' } });
        const withCredentials = await fetch(`${api}/api/v0/chapters/`, {
          headers: { 'X-API-Key': key },
          credentials: 'include',
        }).then(
          () => 'read',
          () => 'blocked',
        );
        const graphql = await fetch(`${api}/graphql/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"query":"{ me { login } }"}',
        }).then(
          () => 'read',
          () => 'blocked',
        );
        return {
          status: response.status,
          isList: Array.isArray(body.items) && typeof body.count === 'number',
          etag: response.headers.get('etag'),
          remaining: response.headers.get('ratelimit-remaining'),
          fields: [fields(response), fields(again)],
          againStatus: again.status,
          refused: { status: refused.status, body: (await refused.json()) as unknown },
          withCredentials,
          graphql,
        };
      },
      { api: origin, key: created.rawKey },
    );
    assert.equal(result.status, 200);
    assert.ok(result.isList);
    assert.ok(result.etag, 'ETag is exposed to the page');
    assert.ok(result.remaining, 'RateLimit-Remaining is exposed to the page');
    assert.equal(result.againStatus, 200);
    // RateLimit-Remaining, RateLimit, RateLimit-Policy, API-Key-Expiration, X-Request-Id: read by the page, routed and early.
    assert.deepEqual(result.fields, [Array(5).fill(true), Array(5).fill(true)]);
    assert.deepEqual(result.refused, { status: 401, body: UNAUTHORIZED });
    assert.equal(result.withCredentials, 'blocked', 'never with credentials');
    assert.equal(result.graphql, 'blocked', 'GraphQL stays same-origin');
  } finally {
    await context.close();
    await new Promise((resolve) => site.close(resolve));
  }
});
