// The OWASP Nest frontend's own GraphQL documents, sent verbatim, with sign-in through the GitHub stand-in:
// githubAuth, the API key page's query and mutations, and logoutUser signed in and signed out.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { graphql, inDays, type Browser } from './auth.ts';
import { ALICE, startGithubStandIn, githubSignInEnv, type GithubStandIn, type StandInUser } from './github-standin.ts';
import {
  CREATE_API_KEY,
  GET_API_KEYS,
  LOGOUT_DJANGO_MUTATION,
  REVOKE_API_KEY,
  SYNC_DJANGO_SESSION_MUTATION,
} from './nest-frontend-documents.ts';

const STAFF: StandInUser = {
  id: 502,
  login: 'Staff-Member',
  name: 'Staff Member',
  emails: [{ email: 'staff@example.org', primary: true, verified: true }],
};

let github: GithubStandIn;
let t: TestApp;
before(async () => {
  github = await startGithubStandIn();
  t = await buildTestApp({
    env: {
      ...githubSignInEnv(github),
      REST_AUTH: 'required',
      OWASP_STAFF_LOGINS: ' someone-else , staff-member ',
    },
    captureLogs: true,
  });
});
after(async () => {
  for (const token of github.tokens.keys()) assert.ok(!t.logs().includes(token), 'a GitHub token reached the logs');
  await t.close();
  await github.close();
});

/** The frontend's sign-in: a GitHub access token handed to githubAuth, which sets the session cookie. */
async function signIn(user: StandInUser): Promise<{ browser: Browser; result: Record<string, unknown> }> {
  const token = `gho_frontend_${user.login}`;
  github.tokens.set(token, user);
  const browser: Browser = { cookies: {} };
  const res = await graphql(t, browser, SYNC_DJANGO_SESSION_MUTATION, { accessToken: token });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().errors, undefined, res.body);
  return { browser, result: res.json().data.githubAuth };
}

const userId = async (login: string) =>
  (await t.database.db.selectFrom('users').select('id').where('login', '=', login).executeTakeFirstOrThrow()).id;

test('githubAuth { message ok user { id isOwaspStaff } } signs in and answers the reference’s fields', async () => {
  const { browser, result } = await signIn(ALICE);
  assert.deepEqual(result, {
    message: 'Signed in successfully.',
    ok: true,
    user: { id: Buffer.from(`AuthUserNode:${await userId('alice-gh')}`).toString('base64'), isOwaspStaff: false },
  });
  assert.ok(browser.cookies.cds_session && browser.cookies.csrftoken, 'the session cookie is set');
  const me = (await graphql(t, browser, '{ me { id username isOwaspStaff login name avatarUrl } }')).json().data.me;
  assert.deepEqual(me, {
    id: (result.user as { id: string }).id,
    username: 'alice-gh',
    isOwaspStaff: false,
    login: 'alice-gh',
    name: 'Alice Example',
    avatarUrl: 'https://avatars.example/501',
  });
});

test('isOwaspStaff is true for a login listed in OWASP_STAFF_LOGINS, whatever its case', async () => {
  const { result } = await signIn(STAFF);
  assert.equal(result.ok, true);
  assert.deepEqual(result.user, {
    id: Buffer.from(`AuthUserNode:${await userId('Staff-Member')}`).toString('base64'),
    isOwaspStaff: true,
  });
});

test('githubAuth with a token GitHub refuses: ok false, no user, no session', async () => {
  const browser: Browser = { cookies: {} };
  const res = await graphql(t, browser, SYNC_DJANGO_SESSION_MUTATION, { accessToken: 'gho_revoked_or_forged' });
  assert.equal(res.json().errors, undefined);
  const result = res.json().data.githubAuth;
  assert.equal(result.ok, false);
  assert.equal(result.user, null);
  assert.ok(result.message.length > 0);
  assert.equal(browser.cookies.cds_session, undefined);
});

test('logoutUser when not signed in: ok false with a message, not an error; a forged session cookie is the same', async () => {
  for (const browser of [undefined, { cookies: { cds_session: 'x'.repeat(43), csrftoken: 'abc' } }]) {
    const res = await graphql(t, browser, LOGOUT_DJANGO_MUTATION);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().errors, undefined, res.body);
    assert.deepEqual(res.json().data.logoutUser, {
      code: 'UNAUTHORIZED',
      message: 'User is not logged in.',
      ok: false,
    });
  }
});

test('the API key page’s documents: list, create, use, revoke, then sign out', async () => {
  const { browser } = await signIn(ALICE);
  const empty = (await graphql(t, browser, GET_API_KEYS)).json();
  assert.deepEqual(empty, { data: { activeApiKeyCount: 0, apiKeys: [] } });

  const expiresAt = inDays(30);
  const created = (await graphql(t, browser, CREATE_API_KEY, { name: 'frontend key', expiresAt })).json().data
    .createApiKey;
  assert.equal(created.ok, true);
  assert.equal(created.code, 'SUCCESS');
  assert.equal(created.message, 'API key created successfully.');
  assert.match(created.rawKey, /^cds_/);
  assert.deepEqual(Object.keys(created.apiKey), ['id', 'createdAt', 'expiresAt', 'isRevoked', 'name', 'uuid']);
  assert.equal(created.apiKey.name, 'frontend key');
  assert.equal(created.apiKey.isRevoked, false);
  assert.equal(Date.parse(created.apiKey.expiresAt), Date.parse(expiresAt));
  assert.equal(created.apiKey.id, Buffer.from(`ApiKeyNode:${created.apiKey.uuid}`).toString('base64'));
  const withKey = { 'x-api-key': created.rawKey };
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v0/chapters/', headers: withKey })).statusCode, 200);

  const listed = (await graphql(t, browser, GET_API_KEYS)).json().data;
  assert.equal(listed.activeApiKeyCount, 1);
  assert.deepEqual(listed.apiKeys, [created.apiKey]);

  const refused = (await graphql(t, browser, CREATE_API_KEY, { name: 'past', expiresAt: inDays(-1) })).json().data
    .createApiKey;
  assert.deepEqual(refused, {
    apiKey: null,
    code: 'INVALID_DATE',
    message: 'Expiry date must be in future',
    ok: false,
    rawKey: null,
  });

  const revoked = (await graphql(t, browser, REVOKE_API_KEY, { uuid: created.apiKey.uuid })).json().data.revokeApiKey;
  assert.deepEqual(revoked, { code: 'SUCCESS', message: 'API key revoked successfully.', ok: true });
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v0/chapters/', headers: withKey })).statusCode, 401);
  assert.deepEqual((await graphql(t, browser, GET_API_KEYS)).json(), { data: { activeApiKeyCount: 0, apiKeys: [] } });
  const unknown = (await graphql(t, browser, REVOKE_API_KEY, { uuid: '00000000-0000-4000-8000-000000000000' })).json()
    .data.revokeApiKey;
  assert.deepEqual(unknown, { code: 'NOT_FOUND', message: 'API key not found.', ok: false });

  const stale: Browser = { cookies: { ...browser.cookies } };
  const out = await graphql(t, browser, LOGOUT_DJANGO_MUTATION);
  assert.deepEqual(out.json(), {
    data: { logoutUser: { code: 'SUCCESS', message: 'Logged out successfully.', ok: true } },
  });
  assert.equal(browser.cookies.cds_session, undefined, 'the session cookie is cleared');
  const replayed = (await graphql(t, stale, GET_API_KEYS)).json();
  assert.equal(replayed.errors[0].extensions.code, 'UNAUTHORIZED', 'the old session cookie no longer signs in');
  assert.ok(!t.logs().includes(created.rawKey), 'the raw key reached the logs');
  assert.equal((await graphql(t, browser, LOGOUT_DJANGO_MUTATION)).json().data.logoutUser.ok, false);
});
