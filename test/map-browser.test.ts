// Test tier: system (drives Chromium): `npm run test:system`, CI.
// The /map page in a real browser (Debian's Chromium, playwright-core), offline: every request to a
// host other than our 127.0.0.1 server is failed and recorded, and none may be attempted. The drawn
// markers are counted against the API's GeoJSON (with REST_AUTH=required: the page itself needs no
// key), a country and a region filter change them as the API's filters do, and a click, Enter and
// Space show a record with its API link.
// With UPDATE_SCREENSHOT=1 it replaces docs/map.png (the picture in docs/api.md); otherwise the screenshot
// goes to a temporary file. Never downloads a browser; without Chromium the test fails.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { type Browser } from 'playwright-core';
import { openChromium, releaseChromium, onlyOrigin, pageProblems } from './chromium.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { event, utcDate } from './factories-community.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { CONTENT_SECURITY_POLICY } from '../src/http/security-headers.ts';

const SCREENSHOT =
  process.env.UPDATE_SCREENSHOT === '1'
    ? fileURLToPath(new URL('../docs/map.png', import.meta.url))
    : path.join(os.tmpdir(), `cds-map-page-${process.pid}.png`);
const GEO = 'application/geo+json';

let t: TestApp | undefined;
let browser: Browser | undefined;
let origin = '';
let apiKey = '';

before(async () => {
  t = await buildTestApp({ importBundled: true, env: { REST_AUTH: 'required' } });
  const db = t.database.db;
  // Upcoming events with a place (drawn), one without (not drawn), one past (not drawn).
  await event(db, {
    key: 'appsec-lisbon',
    name: 'OWASP AppSec Days Lisbon',
    start_date: utcDate(30),
    end_date: utcDate(31),
    latitude: 38.7223,
    longitude: -9.1393,
    url: 'https://example.org/lisbon',
  });
  await event(db, {
    key: 'global-appsec-sf',
    name: 'OWASP Global AppSec San Francisco',
    start_date: utcDate(60),
    end_date: utcDate(63),
    latitude: 37.7749,
    longitude: -122.4194,
  });
  await event(db, {
    key: 'online-summit',
    name: 'Online summit',
    start_date: utcDate(10),
    end_date: utcDate(10),
    latitude: null,
    longitude: null,
  });
  await event(db, {
    key: 'past-berlin',
    name: 'Past Berlin',
    start_date: utcDate(-30),
    end_date: utcDate(-29),
    latitude: 52.52,
    longitude: 13.405,
  });
  const user = await upsertLocalUser(db, 'map-test');
  const created = await createApiKey(db, user.id, 'map test', new Date(Date.now() + 86_400_000));
  assert.ok(created.ok);
  apiKey = created.rawKey;
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await openChromium();
});

after(async () => {
  await releaseChromium(browser);
  await t?.close();
});

/** The number of features of a GeoJSON list of the API, read with a key (`count` of a one-feature page). */
async function apiFeatureCount(query: string): Promise<number> {
  const res = await t!.app.inject({
    method: 'GET',
    url: `${query}${query.includes('?') ? '&' : '?'}limit=1`,
    headers: { accept: GEO, 'x-api-key': apiKey },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().type, 'FeatureCollection');
  return res.json().count as number;
}

test('the map draws every chapter and upcoming event the API gives as GeoJSON, filters them, and shows a record on click, Enter and Space', async () => {
  assert.ok(browser && t);
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale: 'en-US',
    timezoneId: 'UTC',
    colorScheme: 'light',
  });
  try {
    // Offline: only our server answers; anything else is failed and recorded.
    const elsewhere = await onlyOrigin(context, origin);
    const page = await context.newPage();
    const problems = pageProblems(page);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));

    const response = await page.goto(`${origin}/map`);
    assert.equal(response?.status(), 200);
    assert.equal(response?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY, 'the CSP of the other pages');
    await page.getByText(/^Showing \d+ chapters/).waitFor();
    assert.ok(requested.includes('/static/vendor/countries-110m.json'), 'the outlines come from our server');
    assert.ok(requested.includes('/map/chapters.geojson'));

    const chapters = page.locator('#map .marker-chapter:visible');
    const events = page.locator('#map .marker-event:visible');
    const allChapters = await apiFeatureCount('/api/v0/chapters/');
    assert.ok(allChapters > 300, `the bundled chapters: ${allChapters}`);
    assert.equal(await chapters.count(), allChapters, 'one marker per chapter of the API’s GeoJSON');
    const upcoming = await apiFeatureCount('/api/v0/events/?is_upcoming=true');
    assert.equal(await events.count(), upcoming);
    assert.ok(upcoming >= 2, 'the two placed upcoming events of this test at least');
    assert.equal(
      await page
        .locator('#map .marker-event[data-key="online-summit"], #map .marker-event[data-key="past-berlin"]')
        .count(),
      0,
    );
    assert.equal(
      await page.locator('#chapter-rows tr:visible').count(),
      allChapters,
      'the list holds the same records',
    );
    assert.equal(await page.locator('#map path.land').count(), 1, 'the country outlines are drawn');
    assert.ok((await page.locator('#map path.land').getAttribute('d'))!.length > 10_000);
    assert.ok(await page.locator('#map .land').isVisible());

    // Take the picture before filtering: the whole map, one event selected from its row.
    await page.locator('#event-rows').getByRole('button', { name: 'OWASP AppSec Days Lisbon' }).click();
    await page.locator('#map-detail').getByText('Upcoming event').waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    assert.ok(statSync(SCREENSHOT).size > 20_000, 'the screenshot shows a map');
    if (process.env.UPDATE_SCREENSHOT !== '1') rmSync(SCREENSHOT);

    // A country filter: the markers are the API's chapters of that country; the events are hidden.
    await page.getByLabel('Country').selectOption('IN');
    const india = await apiFeatureCount('/api/v0/chapters/?country=IN');
    assert.ok(india > 10 && india < allChapters);
    assert.equal(await chapters.count(), india);
    assert.equal(await events.count(), 0);
    await page.getByText(`Showing ${india} chapters in India`).waitFor();
    // A region filter: the API's chapters of that region (`q=region:`), and the countries offered narrow to it.
    await page.getByLabel('Country').selectOption('');
    await page.getByLabel('Region').selectOption('Europe');
    const europe = await apiFeatureCount('/api/v0/chapters/?q=region:Europe');
    assert.equal(await chapters.count(), europe);
    assert.ok(europe > 10 && europe < allChapters);
    const countries = await page.locator('#filter-country option').allTextContents();
    assert.ok(countries.includes('Germany') && !countries.includes('India'), countries.join(', '));

    // A country with one chapter: click its marker, see the record and follow its API link.
    await page.getByLabel('Region').selectOption('');
    const feed = (await (await fetch(`${origin}/map/chapters.geojson`)).json()) as {
      features: { properties: { country_code: string; country: string } }[];
    };
    const perCountry = new Map<string, number>();
    for (const { properties: p } of feed.features)
      perCountry.set(p.country_code, (perCountry.get(p.country_code) ?? 0) + 1);
    const single = [...perCountry].find(([code, n]) => n === 1 && code !== '')![0];
    const countryName = feed.features.find((f) => f.properties.country_code === single)!.properties.country;
    await page.getByLabel('Country').selectOption(single);
    assert.equal(await chapters.count(), await apiFeatureCount(`/api/v0/chapters/?country=${single}`));
    assert.equal(await chapters.count(), 1);
    await chapters.first().click();
    const detail = page.locator('#map-detail');
    await detail.getByText(countryName, { exact: true }).waitFor();
    const link = detail.getByRole('link', { name: /^API record: \/api\/v0\/chapters\// });
    const href = (await link.getAttribute('href'))!;
    const record = await t.app.inject({ method: 'GET', url: href, headers: { 'x-api-key': apiKey } });
    assert.equal(record.statusCode, 200);
    assert.equal(record.json().country, countryName);
    assert.equal(await detail.locator('h3').textContent(), record.json().name);

    // Keyboard: Enter on a focused marker, Space on a list item.
    await page.getByLabel('Country').selectOption('');
    const lisbon = page.locator('#map .marker-event[data-key="appsec-lisbon"]');
    await lisbon.focus();
    await page.keyboard.press('Enter');
    await detail.getByRole('link', { name: 'API record: /api/v0/events/appsec-lisbon' }).waitFor();
    assert.equal(await lisbon.getAttribute('aria-pressed'), 'true');
    await page.locator('#event-rows').getByRole('button', { name: 'OWASP Global AppSec San Francisco' }).focus();
    await page.keyboard.press('Space');
    await detail.getByRole('link', { name: 'API record: /api/v0/events/global-appsec-sf' }).waitFor();
    assert.equal(
      await page.evaluate('document.activeElement && document.activeElement.id'),
      'map-detail',
      'the record takes the focus',
    );
    // Selecting keeps the keyboard on the marker (it used to fall to <body>), and the focus ring is drawn around it.
    await lisbon.focus();
    await page.keyboard.press('Enter');
    assert.equal(
      await page.evaluate('document.activeElement.dataset.key'),
      'appsec-lisbon',
      'the marker keeps the focus',
    );
    // Evaluated in the page: its centre against the focused marker's.
    const ringAround = async (ring: string) =>
      page.evaluate(`(() => {
        const circle = document.querySelector('${ring}');
        const marker = document.activeElement.getBoundingClientRect();
        const box = circle.getBoundingClientRect();
        return circle.getAttribute('visibility') === 'visible' &&
          Math.abs(box.x + box.width / 2 - (marker.x + marker.width / 2)) < 2 &&
          Math.abs(box.y + box.height / 2 - (marker.y + marker.height / 2)) < 2;
      })()`);
    assert.ok(await ringAround('#map .ring-focus'), 'the focus ring is around the focused marker');
    assert.ok(await ringAround('#map .ring-selected'), 'the selection ring too');

    // Zoom and pan: the buttons, the keyboard, the wheel and a drag move the markers apart or across; the markers
    // keep their size; "Whole world" puts everything back.
    const where = async (key: string) => {
      const box = (await page.locator(`#map .marker[data-key="${key}"]`).boundingBox())!;
      return { x: box.x + box.width / 2, y: box.y + box.height / 2, size: box.width };
    };
    const [a, b] = [...new Set(feed.features.map((f) => (f.properties as unknown as { key: string }).key))];
    const apart = async () => {
      const [p, q] = [await where(a!), await where(b!)];
      return Math.hypot(p.x - q.x, p.y - q.y);
    };
    const whole = await apart();
    const size = (await where(a!)).size;
    await page.getByRole('button', { name: 'Zoom in' }).click();
    assert.ok(Math.abs((await apart()) / whole - 2) < 0.05, 'Zoom in doubles the distances');
    assert.ok(Math.abs((await where(a!)).size - size) < 0.5, 'markers keep their size');
    await lisbon.focus();
    await page.keyboard.press('+');
    assert.equal(await page.locator('#map').getAttribute('data-zoom'), '4.00');
    const before = await where('appsec-lisbon');
    await page.keyboard.press('ArrowLeft');
    const after = await where('appsec-lisbon');
    assert.ok(after.x > before.x + 10 && Math.abs(after.y - before.y) < 1, 'the arrow keys pan');
    assert.equal(await page.evaluate('document.activeElement.dataset.key'), 'appsec-lisbon', 'still focused');
    await page.keyboard.press('-');
    assert.equal(await page.locator('#map').getAttribute('data-zoom'), '2.00');
    const frame = (await page.locator('#map').boundingBox())!;
    await page.mouse.move(frame.x + frame.width / 2, frame.y + frame.height / 2);
    await page.mouse.wheel(0, -300);
    // Polled through the locator, not waitForFunction: its string predicate is run with eval, which the CSP refuses.
    while (Number(await page.locator('#map').getAttribute('data-zoom')) <= 2) await page.waitForTimeout(20);
    const dragFrom = await where('appsec-lisbon');
    await page.mouse.move(frame.x + 20, frame.y + 20);
    await page.mouse.down();
    await page.mouse.move(frame.x + 120, frame.y + 60, { steps: 5 });
    await page.mouse.up();
    const dragTo = await where('appsec-lisbon');
    assert.ok(dragTo.x - dragFrom.x > 50 && dragTo.y - dragFrom.y > 20, 'a drag pans');
    await page.getByRole('button', { name: 'Whole world' }).click();
    assert.equal(await page.locator('#map').getAttribute('data-zoom'), '1.00');
    assert.ok(Math.abs((await apart()) - whole) < 0.5);

    // Every marker is reachable by Tab and named.
    assert.equal(await page.locator('#map .marker[tabindex="0"][aria-label]').count(), allChapters + upcoming);

    assert.deepEqual(elsewhere, [], 'no request left our server');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('the map needs no key; its data is GeoJSON with ETags; the landing page links to it', async () => {
  assert.ok(t);
  const data = await fetch(`${origin}/map/chapters.geojson`);
  assert.equal(data.status, 200);
  assert.equal(data.headers.get('content-type'), 'application/geo+json; charset=utf-8');
  const body = (await data.json()) as { type: string; features: { properties: Record<string, unknown> }[] };
  assert.equal(body.type, 'FeatureCollection');
  assert.equal(body.features.length, await apiFeatureCount('/api/v0/chapters/'));
  assert.deepEqual(Object.keys(body.features[0]!.properties), [
    'key',
    'name',
    'latitude',
    'longitude',
    'created_at',
    'updated_at',
    'country',
    'country_code',
    'region',
  ]);
  assert.equal(
    (await fetch(`${origin}/map/chapters.geojson`, { headers: { 'if-none-match': data.headers.get('etag')! } })).status,
    304,
  );
  assert.equal((await fetch(`${origin}/api/v0/chapters/`)).status, 401, 'the API itself still needs a key');
  for (const file of ['d3-array.min.js', 'd3-geo.min.js', 'topojson-client.min.js', 'countries-110m.json']) {
    assert.equal((await fetch(`${origin}/static/vendor/${file}`)).status, 200, file);
  }
  assert.equal((await fetch(`${origin}/static/vendor/..%2Fpackage.json`)).status, 404);
  const landing = await (await fetch(`${origin}/`)).text();
  assert.match(landing, /href="\/map"/);
});
