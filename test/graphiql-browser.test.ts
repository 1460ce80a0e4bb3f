// Test tier: system (drives Chromium): `npm run test:system`, CI.
// GraphiQL at /graphiql in a real browser (Debian's Chromium through playwright-core), with every request to
// another host than our server failed: the page renders from our own copies of the npm packages, a query runs,
// and once signed in (AUTH_DEV_LOGIN's local sign-in) a mutation runs, sent with the X-CSRFToken header that
// the server demands of a request carrying the session cookie.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type BrowserContext, type Page } from 'playwright-core';
import { onlyOrigin, pageProblems, servedToChromium } from './chromium.ts';
import { buildTestApp } from './app.ts';

const served = servedToChromium({ env: { AUTH_DEV_LOGIN: 'true' } });

interface Watched {
  context: BrowserContext;
  page: Page;
  /** Requests to any other origin than our server's, all failed by the route below. */
  outside: string[];
  /** CSP refusals and script errors. */
  problems: string[];
}

async function openContext(): Promise<Watched> {
  const context = await served.browser.newContext({ viewport: { width: 1200, height: 800 } });
  // Not a timed assertion: a bound on each wait, above Playwright's 30 s, because GraphiQL's 1.5 MB of script can
  // take that long to parse on a loaded 2-core machine.
  context.setDefaultTimeout(120_000);
  const outside = await onlyOrigin(context, served.origin);
  const page = await context.newPage();
  const problems = pageProblems(page);
  page.on('response', async (response) => {
    if (response.status() >= 400)
      problems.push(
        `${response.status()} ${response.request().method()} ${response.url()} ${response.request().postData() ?? ''} ${await response.text()}`,
      );
  });
  return { context, page, outside, problems };
}

interface CodeMirrorElement {
  CodeMirror: { setValue(text: string): void; getValue(): string };
}

async function openGraphiql(page: Page) {
  await page.goto(`${served.origin}/graphiql`);
  await page.waitForSelector('html[data-graphiql="ready"]');
  await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ state: 'visible' });
}

async function run(page: Page, query: string): Promise<unknown> {
  // CodeMirror 5 keeps its editor object on its element.
  await page
    .locator('.graphiql-query-editor .CodeMirror')
    .evaluate((element, text) => (element as unknown as CodeMirrorElement).CodeMirror.setValue(text), query);
  const response = page.waitForResponse(
    (r) =>
      r.url() === `${served.origin}/graphql/` &&
      r.request().method() === 'POST' &&
      (r.request().postData() ?? '').includes(query.slice(0, 20)),
  );
  await page.getByRole('button', { name: /Execute query/ }).click();
  await response;
  const result = page.locator('.graphiql-response .CodeMirror');
  await result
    .filter({ hasText: '"data"' })
    .or(result.filter({ hasText: '"errors"' }))
    .waitFor();
  return JSON.parse(
    await result.evaluate((element) => (element as unknown as CodeMirrorElement).CodeMirror.getValue()),
  ) as unknown;
}

test('GraphiQL renders from our own files with nothing from another host, and a query shows its result', async () => {
  const { context, page, outside, problems } = await openContext();
  try {
    const hosts = new Set<string>();
    page.on('request', (request) => hosts.add(new URL(request.url()).origin));
    await openGraphiql(page);
    assert.deepEqual(await run(page, '{ me { login } }'), { data: { me: null } });
    assert.deepEqual(outside, [], 'no request to another host');
    assert.deepEqual([...hosts], [served.origin]);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('signed in, a mutation from GraphiQL creates a key, sent with the CSRF token of the cookie', async () => {
  const { context, page, outside, problems } = await openContext();
  try {
    await page.goto(`${served.origin}/settings/api-keys`);
    await page.waitForSelector('html[data-dev-login="ready"]');
    await page.getByRole('button', { name: 'Sign in locally' }).click();
    await page.getByText('Signed in as').waitFor();

    await openGraphiql(page);
    const sent: Record<string, string>[] = [];
    page.on('request', (request) => {
      if (request.url() === `${served.origin}/graphql/` && request.method() === 'POST') sent.push(request.headers());
    });
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const result = (await run(
      page,
      `mutation { createApiKey(name: "from graphiql", expiresAt: "${expiresAt}") { ok code rawKey } }`,
    )) as {
      data: { createApiKey: { ok: boolean; code: string | null; rawKey: string } };
    };
    assert.equal(result.data.createApiKey.ok, true, JSON.stringify(result));
    assert.match(result.data.createApiKey.rawKey, /^cds_/);
    const stored = await served.t.database.db
      .selectFrom('api_keys')
      .select('name')
      .where('name', '=', 'from graphiql')
      .execute();
    assert.equal(stored.length, 1);

    // The header the server checks: the page sent it, equal to the csrftoken cookie, beside the session cookie.
    const cookies = Object.fromEntries(
      (await context.cookies(served.origin)).map((cookie) => [cookie.name, cookie.value]),
    );
    assert.ok(cookies.cds_session, 'signed in');
    const mutation = sent.at(-1)!;
    assert.equal(mutation['x-csrftoken'], cookies.csrftoken);
    assert.deepEqual(outside, []);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('GraphiQL answers 404 in production, and its files only by their known names', async () => {
  const missing = await served.t.app.inject({ method: 'GET', url: '/graphiql/assets/package.json' });
  assert.equal(missing.statusCode, 404);
  const page = await served.t.app.inject({ method: 'GET', url: '/graphiql' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-security-policy'] as string, /script-src 'self';/);
  assert.doesNotMatch(page.body, /https?:\/\//, 'the page names no other host');
  const production = await buildTestApp({ env: { NODE_ENV: 'production', SESSION_SECRET: 'x'.repeat(32) } });
  try {
    assert.equal((await production.app.inject({ method: 'GET', url: '/graphiql' })).statusCode, 404);
    assert.equal(
      (await production.app.inject({ method: 'GET', url: '/graphiql/assets/graphiql.min.js' })).statusCode,
      404,
    );
  } finally {
    await production.close();
  }
});

test("the REST documentation (Swagger UI) wears the site's logo and leads back to the site", async () => {
  const { context, page, outside, problems } = await openContext();
  try {
    await page.goto(`${served.origin}/api/v0/docs`);
    const home = page.getByRole('link', { name: 'OWASP community data: back to the site' });
    await home.waitFor();
    assert.equal(await home.getAttribute('href'), '/');
    assert.match((await home.locator('img').getAttribute('src'))!, /^data:image\/svg\+xml;base64,/);
    assert.equal(await page.title(), 'OWASP community data API: documentation');
    // The operations are there, and the bar's link goes home.
    await page.getByText('/api/v0/chapters/').first().waitFor();
    await home.click();
    await page.waitForURL(`${served.origin}/`);
    // The landing page's link to a list opens that operation in the docs.
    await page.getByRole('link', { name: '/api/v0/chapters/' }).click();
    await page.locator('#operations-Chapters-list_chapters.is-open').waitFor();
    assert.deepEqual(outside, []);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
