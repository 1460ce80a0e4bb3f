// Test tier: system (drives Chromium): `npm run test:system`, CI.
// The /health page in a real browser (Debian's Chromium, playwright-core), offline but for our server, with
// REST_AUTH=required (the page needs no key): every project by score as the API ranks them, the level filter and the
// search, a project's checks against the API's health answer, its score over time from the history, and the gaps as
// the API lists them. With UPDATE_SCREENSHOT=1 it replaces docs/health-page.png; otherwise a temporary file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { type Browser } from 'playwright-core';
import { openChromium, releaseChromium, onlyOrigin, pageProblems } from './chromium.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { CONTENT_SECURITY_POLICY } from '../src/http/security-headers.ts';

const SCREENSHOT =
  process.env.UPDATE_SCREENSHOT === '1'
    ? fileURLToPath(new URL('../docs/health-page.png', import.meta.url))
    : path.join(os.tmpdir(), `cds-health-page-${process.pid}.png`);

let t: TestApp | undefined;
let browser: Browser | undefined;
let origin = '';
let apiKey = '';
/** The project whose history gets a week of points. */
let charted = '';
const HISTORY_DAYS = 7;

before(async () => {
  t = await buildTestApp({ importBundled: true, env: { REST_AUTH: 'required' } });
  const db = t.database.db;
  const user = await upsertLocalUser(db, 'health-test');
  const created = await createApiKey(db, user.id, 'health test', new Date(Date.now() + 86_400_000));
  assert.ok(created.ok);
  apiKey = created.rawKey;
  // The import computed every project's health and kept today's point; a week before it, for the chart.
  const top = await db
    .selectFrom('projects')
    .innerJoin('project_health', 'project_health.project_id', 'projects.id')
    .select(['projects.key', 'project_health.score', 'project_health.formula', 'project_health.data_version'])
    .where('projects.is_active', '=', true)
    .orderBy('project_health.score', 'desc')
    .orderBy('projects.key')
    .executeTakeFirstOrThrow();
  charted = top.key;
  const today = Date.UTC(2026, 0, 1);
  await db.deleteFrom('project_health_history').where('project_key', '=', charted).execute();
  for (let i = 0; i < HISTORY_DAYS; i++) {
    const score = Math.max(0, Math.min(100, top.score - 30 + i * 5));
    await db
      .insertInto('project_health_history')
      .values({
        project_key: charted,
        day: new Date(today + i * 86_400_000).toISOString().slice(0, 10),
        score,
        bucket: score >= 75 ? 'healthy' : score >= 50 ? 'needs_attention' : 'unhealthy',
        coverage: 1,
        formula: top.formula,
        data_version: Number(top.data_version),
      })
      .execute();
  }
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await openChromium();
});

after(async () => {
  await releaseChromium(browser);
  await t?.close();
  if (process.env.UPDATE_SCREENSHOT !== '1') rmSync(SCREENSHOT, { force: true });
});

async function api(url: string) {
  const res = await t!.app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } });
  assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 300)}`);
  return res.json();
}

/** Every page of a list of the API, by its page numbers. */
async function apiAll(url: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (let page = 1; ; page++) {
    const body = await api(`${url}${url.includes('?') ? '&' : '?'}limit=100&page=${page}`);
    items.push(...body.items);
    if (!body.has_next) return items;
  }
}

test('/health: projects by score, level filter and search, a project’s checks and history, the gaps; no key, nothing from elsewhere', async () => {
  assert.ok(browser && t);
  const context = await browser.newContext({
    viewport: { width: 1440, height: 1100 },
    locale: 'en-US',
    timezoneId: 'UTC',
    colorScheme: 'light',
  });
  try {
    const elsewhere = await onlyOrigin(context, origin);
    const page = await context.newPage();
    const problems = pageProblems(page);
    const response = await page.goto(`${origin}/health`);
    assert.equal(response?.status(), 200);
    assert.equal(response?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);

    // Every active project, in the API's ranking (ordering=-health_score: highest first, the key breaking ties).
    const ranked = await apiAll('/api/v0/projects/?ordering=-health_score&fields=key,level');
    const rowKeys = async () =>
      page.locator('#project-rows tr th .muted').evaluateAll((cells) => cells.map((c) => c.textContent));
    assert.deepEqual(
      await rowKeys(),
      ranked.map((p) => p.key),
    );
    assert.match(await page.locator('#health-status').innerText(), new RegExp(`^${ranked.length} of ${ranked.length}`));

    // The level filter: the API's level filter, in the same order.
    await page.selectOption('#health-level', 'flagship');
    await Promise.all([page.waitForURL(/level=flagship/), page.click('.health-filters button')]);
    const flagship = ranked.filter((p) => p.level === 'flagship').map((p) => p.key);
    assert.ok(flagship.length > 0);
    assert.deepEqual(await rowKeys(), flagship);

    // The search, within the level.
    const word = String(flagship[0]).slice(0, 4);
    await page.fill('#health-q', word);
    await Promise.all([page.waitForURL(/q=/), page.click('.health-filters button')]);
    const found = await rowKeys();
    assert.ok(found.length > 0 && found.every((key) => flagship.includes(key!)));
    assert.ok(found.includes(flagship[0] as string));

    // A project: its checks as the API gives them, its score over time from the history.
    await page.goto(`${origin}/health`);
    await Promise.all([
      page.waitForURL(new RegExp(`project=${charted}`)),
      page.locator('#project-rows a', { hasText: '' }).first().click(),
    ]);
    const health = await api(`/api/v0/projects/${charted}/health`);
    assert.equal(health.checks.length, 17);
    const rows = await page
      .locator('.checks tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent!.trim())));
    assert.equal(rows.length, 17);
    for (const [i, check] of (health.checks as Record<string, unknown>[]).entries()) {
      const [name, verdict, value, threshold, weight] = rows[i]!;
      assert.equal(name, String(check.name).replace(/_/g, ' '));
      assert.equal(verdict, check.pass === null ? 'Unknown' : check.pass ? 'Pass' : 'Fail', String(check.name));
      const shown = (v: unknown) =>
        v === null
          ? 'unknown'
          : typeof v === 'boolean'
            ? v
              ? 'yes'
              : 'no'
            : Number.isInteger(v)
              ? String(v)
              : (v as number).toFixed(1);
      assert.equal(value, shown(check.value), String(check.name));
      assert.ok(
        threshold!.startsWith(`${check.direction === 'at_most' ? '≤' : '≥'} ${shown(check.threshold)}`),
        threshold,
      );
      assert.equal(Number(weight), check.weight);
    }
    const history = await apiAll(`/api/v0/projects/${charted}/health/history/`);
    assert.ok(history.length >= HISTORY_DAYS);
    assert.equal(await page.locator('.health-chart .chart-dot').count(), history.length);
    const line = await page.locator('.health-chart polyline').getAttribute('points');
    assert.equal(line!.trim().split(/\s+/).length, history.length);

    // The gaps, as the API lists them (the first 30).
    const gaps = await api('/api/v0/chapters/gaps/?limit=30');
    const cities = await page
      .locator('.health-gaps tbody tr th')
      .evaluateAll((cells) => cells.map((c) => c.textContent));
    assert.deepEqual(
      cities,
      gaps.items.map((g: { name: string }) => g.name),
    );
    assert.match(await page.locator('#gaps-title .count').innerText(), new RegExp(`^${gaps.count}$`));

    // The same page from its top (the link scrolled to the project).
    await page.goto(`${origin}/health?project=${charted}`);
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    assert.ok(statSync(SCREENSHOT).size > 20_000, 'the screenshot shows the page');
    assert.deepEqual(elsewhere, [], 'no request left our server');
    assert.deepEqual(problems, [], 'no script error, console error or CSP refusal');
  } finally {
    await context.close();
  }
});

test('/health without a key under REST_AUTH=required; unknown filter values are no filter', async () => {
  for (const url of ['/health', '/health?level=legendary&q=', `/health?project=nobody&level=LAB`, '/health?q=%00']) {
    const res = await t!.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200, url);
    assert.match(String(res.headers['content-type']), /^text\/html/);
  }
  const lab = await t!.app.inject({ method: 'GET', url: '/health?level=LAB' });
  assert.match(lab.body, /<option value="lab" selected>/);
});
