// The GitHub OAuth web flow end to end against a stand-in GitHub on 127.0.0.1.
import { after, before, test } from 'node:test';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../test/app.ts';
import { absorb, graphql, CLIENT_DOCUMENTS, type Browser } from '../../test/auth.ts';
import { ALICE, startGithubStandIn, githubSignInEnv, type GithubStandIn } from '../../test/github-standin.ts';

let github: GithubStandIn;
let t: TestApp;
before(async () => {
  github = await startGithubStandIn();
  t = await buildTestApp({
    env: {
      ...githubSignInEnv(github),
      PUBLIC_URL: 'http://service.test',
    },
    captureLogs: true,
  });
});
after(async () => {
  for (const token of github.tokens.keys()) assert.ok(!t.logs().includes(token), 'a GitHub token reached the logs');
  await t.close();
  await github.close();
});

/** Follows the flow like a browser: our login route, GitHub's authorize page, our callback. */
async function signInFlow(options: { tamperState?: boolean; next?: string } = {}) {
  const browser: Browser = { cookies: {} };
  const login = await t.app.inject({
    method: 'GET',
    url: `/auth/github/login${options.next ? `?next=${encodeURIComponent(options.next)}` : ''}`,
  });
  assert.equal(login.statusCode, 302);
  absorb(browser, login.headers['set-cookie']);
  const authorize = new URL(login.headers.location as string);
  assert.equal(authorize.origin, github.url);
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authorize.searchParams.get('redirect_uri'), 'http://service.test/auth/github/callback');
  const atGithub = await fetch(authorize, { redirect: 'manual' });
  const callback = new URL(atGithub.headers.get('location')!);
  if (options.tamperState) callback.searchParams.set('state', 'forged');
  const res = await t.app.inject({
    method: 'GET',
    url: `${callback.pathname}${callback.search}`,
    headers: {
      cookie: Object.entries(browser.cookies)
        .map(([k, v]) => `${k}=${v}`)
        .join('; '),
    },
  });
  absorb(browser, res.headers['set-cookie']);
  return { res, browser };
}

test('signing in with GitHub creates the user and a session, then lands on the keys page', async () => {
  github.user = ALICE;
  const { res, browser } = await signInFlow();
  assert.equal(res.statusCode, 302, res.body);
  assert.equal(res.headers.location, '/settings/api-keys');
  assert.ok(browser.cookies.cds_session && browser.cookies.csrftoken);
  const cookieLine = [res.headers['set-cookie']].flat().find((c) => c!.startsWith('cds_session='))!;
  assert.match(cookieLine, /HttpOnly/i);
  assert.match(cookieLine, /SameSite=Lax/i);
  const me = await graphql(t, browser, '{ me { login name } activeApiKeyCount }');
  assert.deepEqual(me.json().data, { me: { login: 'alice-gh', name: 'Alice Example' }, activeApiKeyCount: 0 });
  const user = await t.database.db
    .selectFrom('users')
    .selectAll()
    .where('login', '=', 'alice-gh')
    .executeTakeFirstOrThrow();
  assert.equal(user.email, 'alice@example.org', 'the verified primary e-mail is kept, privately');
  const sessions = await t.database.db.selectFrom('sessions').select('digest').execute();
  assert.ok(
    sessions.every((s) => s.digest !== browser.cookies.cds_session),
    'only a digest of the session id is stored',
  );
});

test('the page to return to is kept, but only when it is a local path', async () => {
  github.user = ALICE;
  assert.equal(
    (await signInFlow({ next: '/settings/api-keys?tab=new' })).res.headers.location,
    '/settings/api-keys?tab=new',
  );
  assert.equal((await signInFlow({ next: 'https://evil.example/' })).res.headers.location, '/settings/api-keys');
  assert.equal((await signInFlow({ next: '//evil.example/' })).res.headers.location, '/settings/api-keys');
});

test('a denied authorization signs nobody in', async () => {
  github.user = null;
  const { res, browser } = await signInFlow();
  assert.equal(res.statusCode, 403);
  assert.match(res.body, /cancelled/);
  assert.equal(browser.cookies.cds_session, undefined);
});

test('a forged state is refused before any token exchange', async () => {
  github.user = ALICE;
  const before = github.requests.filter((r) => r.includes('access_token')).length;
  const { res, browser } = await signInFlow({ tamperState: true });
  assert.equal(res.statusCode, 400);
  assert.equal(browser.cookies.cds_session, undefined);
  assert.equal(github.requests.filter((r) => r.includes('access_token')).length, before);
  const noCookie = await t.app.inject({ method: 'GET', url: '/auth/github/callback?code=x&state=y' });
  assert.equal(noCookie.statusCode, 400);
});

test('an account without a verified primary e-mail is refused', async () => {
  github.user = {
    id: 777,
    login: 'unverified',
    name: '',
    emails: [{ email: 'u@example.org', primary: true, verified: false }],
  };
  const { res, browser } = await signInFlow();
  assert.equal(res.statusCode, 403);
  assert.match(res.body, /verified primary e-mail/);
  assert.equal(browser.cookies.cds_session, undefined);
  assert.equal(
    await t.database.db.selectFrom('users').select('id').where('login', '=', 'unverified').executeTakeFirst(),
    undefined,
  );
});

test('githubAuth(accessToken) signs a single-page client in; a bad token does not', async () => {
  github.user = ALICE;
  const token = 'gho_spa_token';
  github.tokens.set(token, ALICE);
  const browser: Browser = { cookies: {} };
  const ok = await graphql(
    t,
    browser,
    'mutation ($t: String!) { githubAuth(accessToken: $t) { ok message user { login } } }',
    { t: token },
  );
  assert.deepEqual(ok.json().data.githubAuth, {
    ok: true,
    message: 'Signed in successfully.',
    user: { login: 'alice-gh' },
  });
  assert.ok(browser.cookies.cds_session);
  assert.equal((await graphql(t, browser, CLIENT_DOCUMENTS.getApiKeys)).json().data.activeApiKeyCount, 0);
  const bad = await graphql(t, undefined, 'mutation { githubAuth(accessToken: "nope") { ok message user { login } } }');
  assert.equal(bad.json().data.githubAuth.ok, false);
  assert.equal(bad.json().data.githubAuth.user, null);
});

test('GitHub unreachable: a clear 503 page, no session, and the service keeps running', async () => {
  const down = await buildTestApp({
    env: {
      GITHUB_CLIENT_ID: 'x',
      GITHUB_CLIENT_SECRET: 'y',
      GITHUB_WEB_URL: 'http://127.0.0.1:9',
      GITHUB_API_URL: 'http://127.0.0.1:9',
    },
  });
  try {
    const browser: Browser = { cookies: {} };
    const login = await down.app.inject({ method: 'GET', url: '/auth/github/login' });
    absorb(browser, login.headers['set-cookie']);
    const state = new URL(login.headers.location as string).searchParams.get('state');
    const res = await down.app.inject({
      method: 'GET',
      url: `/auth/github/callback?code=abc&state=${state}`,
      headers: { cookie: `cds_oauth=${browser.cookies.cds_oauth}` },
    });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /could not be reached/);
    const spa = await down.app.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: 'mutation { githubAuth(accessToken: "t") { ok message } }' },
    });
    assert.deepEqual(spa.json().data.githubAuth.ok, false);
    assert.equal((await down.app.inject({ method: 'GET', url: '/status/' })).statusCode, 200);
  } finally {
    await down.close();
  }
});

test("GitHub's rate limit spent: said as such (not an invalid token), a 503 page, no session", async () => {
  const reset = Math.floor(Date.UTC(2030, 0, 1, 14, 5) / 1000);
  const limited = http.createServer((_req, res) => {
    res
      .writeHead(403, {
        'content-type': 'application/json',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': `${reset}`,
      })
      .end(JSON.stringify({ message: 'API rate limit exceeded for user ID 1.' }));
  });
  await new Promise<void>((resolve) => limited.listen(0, '127.0.0.1', resolve));
  const address = `http://127.0.0.1:${(limited.address() as AddressInfo).port}`;
  const app = await buildTestApp({
    env: { GITHUB_CLIENT_ID: 'x', GITHUB_CLIENT_SECRET: 'y', GITHUB_WEB_URL: address, GITHUB_API_URL: address },
  });
  try {
    const spa = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: 'mutation { githubAuth(accessToken: "t") { ok message } }' },
    });
    assert.deepEqual(spa.json().data.githubAuth, {
      ok: false,
      message: "GitHub's rate limit for this service is spent until 14:05 UTC. Try again then.",
    });
    const browser: Browser = { cookies: {} };
    const login = await app.app.inject({ method: 'GET', url: '/auth/github/login' });
    absorb(browser, login.headers['set-cookie']);
    const state = new URL(login.headers.location as string).searchParams.get('state');
    const res = await app.app.inject({
      method: 'GET',
      url: `/auth/github/callback?code=abc&state=${state}`,
      headers: { cookie: `cds_oauth=${browser.cookies.cds_oauth}` },
    });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /rate limit for this service is spent until 14:05 UTC/);
    assert.equal(browser.cookies.cds_session, undefined);
  } finally {
    await app.close();
    limited.close();
  }
});

test('sign-in is a 404 page that says what to configure when no GitHub app is configured', async () => {
  const bare = await buildTestApp();
  try {
    const page = await bare.app.inject({ method: 'GET', url: '/auth/github/login' });
    assert.equal(page.statusCode, 404);
    // Not a dead end: what to configure, how to get a key meanwhile, and the way back.
    assert.match(page.body, /<code>GITHUB_CLIENT_ID<\/code> and <code>GITHUB_CLIENT_SECRET<\/code>/);
    assert.match(page.body, /npx cds users create LOGIN --key NAME/);
    assert.match(page.body, /<a href="\/settings\/api-keys">Back to API keys<\/a> · <a href="\/">Home<\/a>/);
    assert.doesNotMatch(page.body, /Sign in locally/, 'no local sign-in unless AUTH_DEV_LOGIN');
    assert.equal(
      (await bare.app.inject({ method: 'POST', url: '/auth/dev/login', payload: { login: 'x' } })).statusCode,
      404,
      'dev sign-in does not exist unless enabled',
    );
  } finally {
    await bare.close();
  }
});
