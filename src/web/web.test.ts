// The web pages and their static files, through app.inject.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { buildTestApp, type TestApp } from '../../test/app.ts';
import { CLIENT_DOCUMENTS, cookieHeader, devSignIn } from '../../test/auth.ts';
import { CONTENT_SECURITY_POLICY } from '../http/security-headers.ts';
import { STATIC_DIR } from './static.ts';

const EXPECTED_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

let t: TestApp;
before(async () => {
  t = await buildTestApp({ env: { AUTH_DEV_LOGIN: 'true' } });
});
after(() => t.close());

function assertPageHeaders(headers: Record<string, unknown>) {
  assert.equal(headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(headers['content-security-policy'], EXPECTED_CSP);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['referrer-policy'], 'same-origin');
}

test('the security policy is exactly the agreed one', () => {
  assert.equal(CONTENT_SECURITY_POLICY, EXPECTED_CSP);
});

test('the landing page says what the service is and links onwards, with the attribution', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/', headers: { host: 'data.example.org' } });
  assert.equal(res.statusCode, 200);
  assertPageHeaders(res.headers);
  assert.match(res.body, /<h1>OWASP community data API<\/h1>/);
  assert.match(res.body, /href="\/api\/v0\/docs"/);
  assert.match(res.body, /href="\/settings\/api-keys"/);
  assert.match(
    res.body,
    /Data © OWASP Foundation and the contributors to <a [^>]+>OWASP\/owasp\.github\.io<\/a>, used under <a [^>]+>CC BY-SA 4\.0<\/a>/,
  );
  assert.match(res.body, /MIT License/);
  assert.equal(res.body.match(/CC BY-SA 4\.0/g)?.length, 1, 'the licence is said once (in the footer)');
  assert.match(res.body, /curl -H &quot;X-API-Key: YOUR_KEY&quot; http:\/\/data\.example\.org\/api\/v0\/chapters\//);
  // Each list named is a link to its operation in the API docs (Swagger UI's deep link: tag, operation id).
  assert.match(
    res.body,
    /<a href="\/api\/v0\/docs#\/Chapters\/list_chapters"><code>\/api\/v0\/chapters\/<\/code><\/a>/,
  );
  assert.match(res.body, /<a href="\/api\/v0\/docs#\/Community\/list_members"><code>\/api\/v0\/members\/<\/code><\/a>/);
  assert.doesNotMatch(res.body, /<li><code>\/api\/v0\//, 'no list left as plain text');
});

/** The policy forbids inline scripts, styles and handlers: a page that used one would break. */
function assertNothingInline(body: string) {
  assert.doesNotMatch(body, /<script(?![^>]*\ssrc=)[^>]*>/, 'inline <script>');
  assert.doesNotMatch(body, /<style|\sstyle=|\son[a-z]+=/i, 'inline style or event handler');
}

test("the landing page's first step names only a sign-in this server offers (issue 45)", async () => {
  const step = (body: string) => /<ol class="steps">\s*<li>([\s\S]*?)<\/li>/.exec(body)![1]!;
  // AUTH_DEV_LOGIN, no GitHub app: the local sign-in.
  const local = step((await t.app.inject({ url: '/' })).body);
  assert.match(local, /Sign in locally and create an API key/);
  assert.doesNotMatch(local, /GitHub/);
  const cases = [
    [{ GITHUB_CLIENT_ID: 'client', GITHUB_CLIENT_SECRET: 'secret' }, /Sign in with GitHub and create an API key/],
    [
      { AUTH_DEV_LOGIN: 'false' },
      /from the operator of this service \(<code>npx cds users create LOGIN --key NAME<\/code>/,
    ],
  ] as const;
  for (const [env, expected] of cases) {
    const other = await buildTestApp({ env, sharedDatabase: t.database });
    const body = (await other.app.inject({ url: '/' }).finally(() => other.close())).body;
    assert.match(step(body), expected);
    if (!('GITHUB_CLIENT_ID' in env)) assert.doesNotMatch(step(body), /GitHub/);
  }
});

test('pages carry no inline script or style', async () => {
  for (const url of ['/', '/settings/api-keys']) assertNothingInline((await t.app.inject({ method: 'GET', url })).body);
});

test('signed out, without a GitHub app, the keys page says how to enable sign-in and how to get a key meanwhile', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/settings/api-keys' });
  assert.equal(res.statusCode, 200);
  assert.doesNotMatch(res.body, /Sign in with GitHub|\/auth\/github\/login/, 'no link to a dead end');
  assert.match(res.body, /Sign-in with GitHub is not configured on this server/);
  assert.match(res.body, /<code>GITHUB_CLIENT_ID<\/code> and <code>GITHUB_CLIENT_SECRET<\/code>/);
  assert.match(res.body, /<code>npx cds users create LOGIN --key NAME<\/code>/);
  assert.match(res.body, /Sign in locally/, 'the local sign-in of AUTH_DEV_LOGIN');
  assertNothingInline(res.body);
  // The GitHub sign-in address itself, followed from an old link: the same words, and the local sign-in.
  const login = await t.app.inject({ method: 'GET', url: '/auth/github/login' });
  assert.equal(login.statusCode, 404);
  assert.match(login.body, /<a href="\/settings\/api-keys">Sign in locally<\/a>/);
});

test('signed out, with a GitHub app, the keys page offers only the sign-in link', async () => {
  const github = await buildTestApp({
    env: { GITHUB_CLIENT_ID: 'client', GITHUB_CLIENT_SECRET: 'secret' },
    sharedDatabase: t.database,
  });
  const res = await github.app.inject({ method: 'GET', url: '/settings/api-keys' }).finally(() => github.close());
  assert.equal(res.statusCode, 200);
  assertPageHeaders(res.headers);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.match(
    res.body,
    /<a class="button primary" href="\/auth\/github\/login\?next=\/settings\/api-keys">Sign in with GitHub<\/a>/,
  );
  assert.doesNotMatch(res.body, /create-form|api-keys\.js|not configured/);
  assert.equal((await t.app.inject({ method: 'GET', url: '/settings/api-keys/' })).statusCode, 200);
});

test('signed in, the keys page shows the user (escaped), sign-out and the key manager', async () => {
  const browser = await devSignIn(t, 'pagetester');
  await t.database.db
    .updateTable('users')
    .set({ name: '<b>Page & "Tester"</b>' })
    .where('login', '=', 'pagetester')
    .execute();
  const res = await t.app.inject({
    method: 'GET',
    url: '/settings/api-keys',
    headers: { cookie: cookieHeader(browser) },
  });
  assert.equal(res.statusCode, 200);
  assertPageHeaders(res.headers);
  assert.match(res.body, /<strong>&lt;b&gt;Page &amp; &quot;Tester&quot;&lt;\/b&gt;<\/strong>/);
  assert.match(res.body, /@pagetester/);
  assert.match(res.body, /<button type="button" class="secondary" id="sign-out">Sign out<\/button>/);
  assert.match(res.body, /<script type="module" src="\/static\/api-keys\.js"><\/script>/);
  assert.match(res.body, /<label for="key-name">Name<\/label>/);
  assert.match(res.body, /<label for="key-expiry">Expires<\/label>/);
  assert.match(res.body, /<label for="key-date">Expiry date<\/label>/);
  assert.match(res.body, /role="status" aria-live="polite"/);
  assert.doesNotMatch(res.body, /Sign in with GitHub/);
  assertNothingInline(res.body);
});

test('static files are served from memory with their content types and a short public cache', async () => {
  const expected = {
    'site.css': 'text/css; charset=utf-8',
    'api-keys.js': 'text/javascript; charset=utf-8',
    'graphql-client.js': 'text/javascript; charset=utf-8',
    'messages.js': 'text/javascript; charset=utf-8',
    'key-list.js': 'text/javascript; charset=utf-8',
    'favicon.svg': 'image/svg+xml',
  };
  for (const [name, type] of Object.entries(expected)) {
    const res = await t.app.inject({ method: 'GET', url: `/static/${name}` });
    assert.equal(res.statusCode, 200, name);
    assert.equal(res.headers['content-type'], type, name);
    assert.equal(res.headers['cache-control'], 'public, max-age=300', name);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', name);
    assert.equal(res.body, await readFile(new URL(name, STATIC_DIR), 'utf8'), name);
    const again = await t.app.inject({
      method: 'GET',
      url: `/static/${name}`,
      headers: { 'if-none-match': res.headers.etag as string },
    });
    assert.equal(again.statusCode, 304, name);
    assert.equal(again.body, '');
  }
});

test('the page script sends the client GraphQL documents unchanged', async () => {
  const { body } = await t.app.inject({ method: 'GET', url: '/static/graphql-client.js' });
  for (const document of Object.values(CLIENT_DOCUMENTS)) assert.ok(body.includes(`'${document}'`), document);
});

test('an unknown static file is a JSON 404, and nothing outside the folder is reachable', async () => {
  for (const url of [
    '/static/nope.css',
    '/static/..%2fweb.routes.ts',
    '/static/%2e%2e%2fpages.ts',
    '/static/sub/site.css',
    '/static/',
  ]) {
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.match(res.headers['content-type'] as string, /^application\/json/, url);
    assert.deepEqual(res.json(), { message: 'Not found' }, url);
  }
});

test('HEAD answers like GET without a body', async () => {
  for (const url of ['/', '/settings/api-keys', '/static/site.css']) {
    const get = await t.app.inject({ method: 'GET', url });
    const head = await t.app.inject({ method: 'HEAD', url });
    assert.equal(head.statusCode, 200, url);
    assert.equal(head.headers['content-type'], get.headers['content-type'], url);
    assert.equal(head.headers['content-security-policy'], EXPECTED_CSP, url);
    assert.equal(head.body, '', url);
  }
});

test('other methods on the pages are 405, and the API keeps its own headers', async () => {
  const post = await t.app.inject({ method: 'POST', url: '/' });
  assert.equal(post.statusCode, 405);
  const api = await t.app.inject({ method: 'GET', url: '/api/v0/' });
  assert.equal(api.headers['content-security-policy'], undefined, 'the page policy stays on the pages');
});
