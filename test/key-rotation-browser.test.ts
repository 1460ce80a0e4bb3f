// Test tier: system (drives Chromium): `npm run test:system`, CI.
// The key page's part of issue 30 in a real browser (Debian's Chromium through playwright-core): a key that expires
// within 7 days is flagged, "Rotate" replaces a key (the new one shown once, the old one working for the chosen grace
// period), and a key GitHub found published is listed as "revoked: published at URL".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Page } from 'playwright-core';
import { servedToChromium } from './chromium.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { revokePublishedKeys } from '../src/api-keys/leaks.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';

const served = servedToChromium({ env: { REST_AUTH: 'required', AUTH_DEV_LOGIN: 'true' } });

const status = (page: Page, key: string) =>
  page.evaluate(async (apiKey) => (await fetch('/api/v0/chapters/', { headers: { 'X-API-Key': apiKey } })).status, key);

test('expiring keys are flagged, a key is rotated from the page, a published key is listed', async () => {
  const { t, browser, origin } = served;
  const db = t.database.db;
  const user = await upsertLocalUser(db, 'page-rotator');
  const days = (n: number) => new Date(Date.now() + n * 86_400_000);
  const expiring = await createApiKey(db, user.id, 'expiring', days(3));
  await createApiKey(db, user.id, 'lasting', days(60));
  const leaked = await createApiKey(db, user.id, 'leaked', days(60));
  assert.ok(expiring.ok && leaked.ok);
  const where = 'https://github.com/someone/repo/blob/main/.env';
  await revokePublishedKeys(
    db,
    [{ token: leaked.rawKey, type: 'cds_api_key', url: where, source: 'content' }],
    t.app.shared.changes,
    t.app.log,
    new Date(),
  );

  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC' });
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    // Signed in through the local sign-in (the context's cookies).
    const signedIn = await page.request.post(`${origin}/auth/dev/login`, { data: { login: 'page-rotator' } });
    assert.equal(signedIn.status(), 200);
    await page.goto(`${origin}/settings/api-keys`);
    await page.getByText('You have 2 of 3 active keys.').waitFor();

    const expiringRow = page.getByRole('row', { name: /expiring/ });
    await expiringRow.getByText('expires soon').waitFor();
    assert.equal(
      await page
        .getByRole('row', { name: /lasting/ })
        .getByText('expires soon')
        .count(),
      0,
    );

    const leaks = page.locator('#leaked-keys');
    await leaks.getByText(`leaked revoked: published at ${where}`, { exact: false }).waitFor();
    assert.equal(await leaks.getByRole('link', { name: where }).getAttribute('href'), where);

    await expiringRow.getByRole('button', { name: /^Rotate/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate this key?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /“expiring”/);
    await dialog.getByLabel('Old key keeps working for').selectOption('1');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const keyField = page.getByLabel('API key', { exact: true });
    await page.getByText('Key “expiring” rotated.', { exact: false }).waitFor();
    const rawKey = await keyField.inputValue();
    assert.match(rawKey, /^cds_[A-Za-z0-9_-]{49}$/);
    await page.getByText('The old key keeps working for 1 hour.', { exact: false }).waitFor();
    // The old one during its grace period, and the new one: both listed, both served.
    await page.getByText('You have 3 of 3 active keys.').waitFor();
    assert.equal(await status(page, rawKey), 200);
    assert.equal(await status(page, expiring.rawKey), 200);
    assert.deepEqual(problems, []);
    // (Its 401 is logged by the browser's console, as any failed fetch.)
    assert.equal(await status(page, leaked.rawKey), 401);
  } finally {
    await context.close();
  }
});
