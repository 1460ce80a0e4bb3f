// The API key page in a real browser (Debian's Chromium driven by playwright-core): sign in through
// the GitHub stand-in, create a key, copy it, use it on the REST API, revoke it, sign out.
// Takes a screenshot of the page; with UPDATE_SCREENSHOT=1 it replaces docs/api-keys-page.png (the
// README's picture), otherwise it goes to a temporary file so test runs leave the tree clean.
// Never downloads a browser; without Chromium the test fails.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildTestApp, type TestApp } from './app.ts';
import { ALICE, startGithubStandIn, type GithubStandIn } from './github-standin.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
const SCREENSHOT = process.env.UPDATE_SCREENSHOT === '1'
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
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's "chromium" package. This test never downloads a browser.`);
  }
  github = await startGithubStandIn();
  github.user = ALICE;
  t = await buildTestApp({
    env: {
      REST_AUTH: 'required',
      GITHUB_CLIENT_ID: github.clientId,
      GITHUB_CLIENT_SECRET: github.clientSecret,
      GITHUB_WEB_URL: github.url,
      GITHUB_API_URL: github.url,
    },
  });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
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
    await context.route('https://avatars.example/**', (route) => route.fulfill({ contentType: 'image/svg+xml', body: AVATAR }));
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
    assert.equal(await page.getByLabel('Try it').inputValue(), `curl -H "X-API-Key: ${rawKey}" ${origin}/api/v0/chapters/`);

    await page.getByText('You have 1 of 3 active keys.').waitFor();
    const row = page.getByRole('row', { name: /browser test/ });
    const cells = await row.locator('th, td').allInnerTexts();
    const inDays = (days: number) =>
      new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(Date.now() + days * 86_400_000));
    assert.deepEqual(cells.slice(0, 4), ['browser test', inDays(0), inDays(30), 'never']);
    const stored = await t.database.db.selectFrom('api_keys').select('expires_at').where('name', '=', 'browser test').executeTakeFirstOrThrow();
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
