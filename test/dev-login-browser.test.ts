// Test tier: system (drives Chromium): `npm run test:system`, CI.
// AUTH_DEV_LOGIN=true: the API key page offers a local sign-in that works in one click (Debian's Chromium
// through playwright-core), and without the setting the form is not there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servedToChromium } from './chromium.ts';
import { buildTestApp } from './app.ts';

const served = servedToChromium({ env: { REST_AUTH: 'required', AUTH_DEV_LOGIN: 'true' } });

test('one click on "Sign in locally" signs in as "me" and shows the key page', async () => {
  const { browser, origin } = served;
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(`${origin}/settings/api-keys`);
  await page.waitForSelector('html[data-dev-login="ready"]');
  await page.getByRole('button', { name: 'Sign in locally' }).click();
  await page.getByText('Signed in as').waitFor();
  assert.equal(await page.locator('.account .login').textContent(), '@me');
  await page.getByRole('button', { name: 'Create key' }).waitFor();
  // The keyboard goes on from the key list after the page's reload, not from <body>.
  // (A selector, not waitForFunction: a string predicate is run with eval, which the page's CSP refuses whenever the
  // first check fails and Playwright polls.)
  await page.locator('#keys-title:focus').waitFor();
  // At 3 of 3 keys the form is disabled, and says why; revoking one enables it again.
  const create = page.getByRole('button', { name: 'Create key' });
  for (const name of ['one', 'two', 'three']) {
    await page.getByLabel('Name').fill(name);
    await create.click();
    await page.getByRole('button', { name: 'I have copied it, hide the key' }).click();
  }
  await page.getByText('You have 3 of 3 active keys.').waitFor();
  assert.equal(await create.isDisabled(), true);
  assert.equal(await page.getByLabel('Name').isDisabled(), true);
  await page
    .getByRole('button', { name: /^Revoke/ })
    .first()
    .click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText('You have 2 of 3 active keys.').waitFor();
  assert.equal(await create.isDisabled(), false);
  assert.deepEqual(errors, []);
  await page.close();
});

test('an invalid login is refused on the page and nobody is signed in', async () => {
  const { browser, origin } = served;
  const page = await browser.newPage();
  await page.goto(`${origin}/settings/api-keys`);
  await page.waitForSelector('html[data-dev-login="ready"]');
  await page.fill('#dev-login', 'not a login');
  await page.getByRole('button', { name: 'Sign in locally' }).click();
  await page.getByText('A login is 1 to 39 letters').waitFor();
  assert.equal(await page.getByText('Signed in as').count(), 0);
  await page.close();
});

test('without AUTH_DEV_LOGIN the page has no local sign-in', async () => {
  const other = await buildTestApp();
  try {
    const res = await other.app.inject({ method: 'GET', url: '/settings/api-keys' });
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /Sign in locally|dev-login/);
    assert.equal(
      (await other.app.inject({ method: 'POST', url: '/auth/dev/login', payload: { login: 'me' } })).statusCode,
      404,
    );
  } finally {
    await other.close();
  }
});
