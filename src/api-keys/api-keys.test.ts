// API key management over GraphQL, as the reference client sends it: every result code, every
// state transition, the limit under concurrency, ownership, CSRF and sessions.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../test/app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays, type Browser } from '../../test/auth.ts';

let t: TestApp;
const secrets: string[] = [];
// The app's time, on which keys expire: real time, or the instant the expiry test sets instead of waiting.
let fixed: number | undefined;
const clock = () => fixed ?? Date.now();
before(async () => {
  t = await buildTestApp({ env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' }, captureLogs: true, clock });
});
after(async () => {
  // No raw key or session id may reach the logs.
  const logs = t.logs();
  assert.ok(logs.length > 1000, 'the logs were captured');
  for (const secret of secrets) assert.ok(!logs.includes(secret), 'a secret reached the logs');
  await t.close();
});

async function signIn(login: string): Promise<Browser> {
  const browser = await devSignIn(t, login);
  secrets.push(browser.cookies.cds_session!, browser.cookies.csrftoken!);
  return browser;
}

async function create(browser: Browser, name: string, expiresAt = inDays(30)) {
  const res = await graphql(t, browser, DOC.createApiKey, { name, expiresAt });
  assert.equal(res.statusCode, 200, res.body);
  const result = res.json().data.createApiKey;
  if (result.rawKey) secrets.push(result.rawKey);
  return result;
}

async function keysOf(browser: Browser) {
  const res = await graphql(t, browser, DOC.getApiKeys);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as {
    activeApiKeyCount: number;
    apiKeys: { uuid: string; name: string; isRevoked: boolean }[];
  };
}

const rest = (key: string | undefined) =>
  t.app.inject({ method: 'GET', url: '/api/v0/chapters/', headers: key === undefined ? {} : { 'x-api-key': key } });

test('createApiKey with the client document returns the key once, with SUCCESS', async () => {
  const browser = await signIn('creator');
  const expiresAt = inDays(90);
  const result = await create(browser, '  laptop  ', expiresAt);
  assert.equal(result.ok, true);
  assert.equal(result.code, 'SUCCESS');
  assert.equal(result.message, 'API key created successfully.');
  assert.match(result.rawKey, /^cds_[A-Za-z0-9_-]{49}$/);
  assert.equal(result.apiKey.name, 'laptop', 'the name is trimmed');
  assert.equal(result.apiKey.isRevoked, false);
  assert.equal(new Date(result.apiKey.expiresAt).getTime(), new Date(expiresAt).getTime());
  assert.match(result.apiKey.uuid, /^[0-9a-f-]{36}$/);
  assert.equal(Buffer.from(result.apiKey.id, 'base64').toString(), `ApiKeyNode:${result.apiKey.uuid}`);
  const listed = await keysOf(browser);
  assert.equal(listed.activeApiKeyCount, 1);
  assert.deepEqual(Object.keys(listed.apiKeys[0]!).sort(), [
    'createdAt',
    'expiresAt',
    'id',
    'isRevoked',
    'name',
    'uuid',
  ]);
  // Only the digest is stored.
  const stored = await sql<{ row: string }>`SELECT row_to_json(k)::text AS row FROM api_keys k`.execute(t.database.db);
  assert.ok(stored.rows.every((r) => !r.row.includes(result.rawKey)));
  assert.equal((await rest(result.rawKey)).statusCode, 200);
});

test('INVALID_NAME for an empty, blank or too long name; 100 characters is fine', async () => {
  const browser = await signIn('namer');
  for (const [name, message] of [
    ['', 'Name is required'],
    ['   ', 'Name is required'],
    ['x'.repeat(101), 'Name too long'],
  ]) {
    const result = await create(browser, name!);
    assert.deepEqual(
      { ok: result.ok, code: result.code, message: result.message, rawKey: result.rawKey, apiKey: result.apiKey },
      { ok: false, code: 'INVALID_NAME', message, rawKey: null, apiKey: null },
    );
  }
  assert.equal((await create(browser, 'é'.repeat(100))).ok, true);
  assert.equal((await keysOf(browser)).activeApiKeyCount, 1);
});

test('INVALID_DATE when expiresAt is not in the future', async () => {
  const browser = await signIn('dater');
  for (const expiresAt of [inDays(-1), new Date(Date.now() - 1000).toISOString()]) {
    const result = await create(browser, 'k', expiresAt);
    assert.equal(result.ok, false);
    assert.equal(result.code, 'INVALID_DATE');
    assert.equal(result.message, 'Expiry date must be in future');
  }
  const bad = await graphql(t, browser, DOC.createApiKey, { name: 'k', expiresAt: 'next tuesday' });
  assert.equal(bad.statusCode, 400, 'a value that is not a DateTime is a GraphQL validation error');
  assert.equal((await keysOf(browser)).activeApiKeyCount, 0);
});

test('LIMIT_REACHED at 3 valid keys; revoked and expired keys do not count', async () => {
  const browser = await signIn('limiter');
  const keys = [await create(browser, 'a'), await create(browser, 'b'), await create(browser, 'c')];
  const fourth = await create(browser, 'd');
  assert.deepEqual(
    [fourth.ok, fourth.code, fourth.message],
    [false, 'LIMIT_REACHED', 'You can have at most 3 active API keys.'],
  );
  await graphql(t, browser, DOC.revokeApiKey, { uuid: keys[0].apiKey.uuid });
  await t.database.db
    .updateTable('api_keys')
    .set({ expires_at: sql`now() - interval '1 second'` })
    .where('uuid', '=', keys[1].apiKey.uuid)
    .execute();
  const listed = await keysOf(browser);
  assert.equal(listed.activeApiKeyCount, 1);
  assert.deepEqual(
    listed.apiKeys.map((k) => k.name),
    ['c'],
  );
  assert.equal((await create(browser, 'e')).ok, true);
  assert.equal((await create(browser, 'f')).ok, true);
  assert.equal((await create(browser, 'g')).code, 'LIMIT_REACHED');
});

test('20 simultaneous creations by one user leave exactly 3 valid keys', async () => {
  const browser = await signIn('racer');
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => create(browser, `k${i}`)));
  assert.equal(results.filter((r) => r.ok).length, 3);
  assert.ok(results.filter((r) => !r.ok).every((r) => r.code === 'LIMIT_REACHED'));
  assert.equal((await keysOf(browser)).activeApiKeyCount, 3);
  const { n } = await t.database.db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('users.login', '=', 'racer')
    .executeTakeFirstOrThrow();
  assert.equal(n, 3);
});

test('revoking: SUCCESS, the key stops working on the next request, revoking again succeeds, no way back', async () => {
  const browser = await signIn('revoker');
  const key = await create(browser, 'temp');
  assert.equal((await rest(key.rawKey)).statusCode, 200);
  const res = await graphql(t, browser, DOC.revokeApiKey, { uuid: key.apiKey.uuid });
  assert.deepEqual(res.json().data.revokeApiKey, {
    code: 'SUCCESS',
    message: 'API key revoked successfully.',
    ok: true,
  });
  assert.equal((await rest(key.rawKey)).statusCode, 401);
  const again = await graphql(t, browser, DOC.revokeApiKey, { uuid: key.apiKey.uuid });
  assert.equal(again.json().data.revokeApiKey.ok, true);
  assert.equal((await keysOf(browser)).activeApiKeyCount, 0);
  assert.equal((await rest(key.rawKey)).statusCode, 401);
});

test("NOT_FOUND for an unknown uuid and for another user's key, which stays untouched", async () => {
  const owner = await signIn('owner');
  const intruder = await signIn('intruder');
  const key = await create(owner, 'mine');
  for (const uuid of [key.apiKey.uuid, '00000000-0000-4000-8000-000000000000']) {
    const res = await graphql(t, intruder, DOC.revokeApiKey, { uuid });
    assert.deepEqual(res.json().data.revokeApiKey, { code: 'NOT_FOUND', message: 'API key not found.', ok: false });
  }
  assert.equal((await keysOf(owner)).activeApiKeyCount, 1);
  assert.equal((await rest(key.rawKey)).statusCode, 200);
});

test('an expired key stops authenticating and disappears from the list, at its expiry to the millisecond', async () => {
  const browser = await signIn('expirer');
  const expiresAt = new Date(clock() + 86_400_000);
  const key = await create(browser, 'a day', expiresAt.toISOString());
  try {
    assert.equal((await rest(key.rawKey)).statusCode, 200); // (now also remembered as valid: key-cache.ts)
    fixed = expiresAt.getTime() - 1;
    assert.equal((await rest(key.rawKey)).statusCode, 200, 'a millisecond before');
    assert.equal((await keysOf(browser)).activeApiKeyCount, 1);
    fixed = expiresAt.getTime();
    assert.equal((await rest(key.rawKey)).statusCode, 401, 'at its expiry');
    const listed = await keysOf(browser);
    assert.equal(listed.activeApiKeyCount, 0);
    assert.deepEqual(listed.apiKeys, []);
    // The app's clock, not the database's, also judges a new key's date: this one is still ahead of real time.
    const past = await create(browser, 'late', new Date(expiresAt.getTime() - 1000).toISOString());
    assert.deepEqual([past.ok, past.code], [false, 'INVALID_DATE']);
  } finally {
    fixed = undefined;
  }
});

test('every operation needs a signed-in user: UNAUTHORIZED with HTTP 200', async () => {
  for (const [query, variables] of [
    [DOC.getApiKeys, {}],
    [DOC.createApiKey, { name: 'x', expiresAt: inDays(1) }],
    [DOC.revokeApiKey, { uuid: '00000000-0000-4000-8000-000000000000' }],
    ['query { activeApiKeyCount }', {}],
  ] as const) {
    const res = await graphql(t, undefined, query, variables);
    assert.equal(res.statusCode, 200);
    const error = res.json().errors[0];
    assert.equal(error.message, 'You must be logged in to perform this action.');
    assert.equal(error.extensions.code, 'UNAUTHORIZED');
  }
  // An API key is not a way to manage keys.
  const browser = await signIn('keyholder');
  const key = await create(browser, 'k');
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql/',
    headers: { 'x-api-key': key.rawKey },
    payload: { query: DOC.getApiKeys },
  });
  assert.equal(res.json().errors[0].extensions.code, 'UNAUTHORIZED');
});

test('CSRF: a state change with a session cookie needs the matching X-CSRFToken, else 403 and nothing changes', async () => {
  const browser = await signIn('csrf');
  for (const csrf of [null, 'wrong-token', `${browser.cookies.csrftoken}x`]) {
    const res = await graphql(t, browser, DOC.createApiKey, { name: 'x', expiresAt: inDays(1) }, { csrf });
    assert.equal(res.statusCode, 403);
    assert.match(res.headers['content-type'] as string, /json/);
  }
  assert.equal((await keysOf(browser)).activeApiKeyCount, 0);
  const token = await t.app.inject({
    method: 'GET',
    url: '/csrf/',
    headers: { cookie: `csrftoken=${browser.cookies.csrftoken}` },
  });
  assert.deepEqual(token.json(), { csrftoken: browser.cookies.csrftoken });
});

test('mutations are refused over GET; queries work over GET', async () => {
  const browser = await signIn('getter');
  const cookie = `cds_session=${browser.cookies.cds_session}`;
  const mutation = encodeURIComponent(`mutation { createApiKey(name: "x", expiresAt: "${inDays(1)}") { ok } }`);
  const refused = await t.app.inject({ method: 'GET', url: `/graphql?query=${mutation}`, headers: { cookie } });
  assert.notEqual(refused.statusCode, 200);
  const query = await t.app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent('{ activeApiKeyCount }')}`,
    headers: { cookie },
  });
  assert.equal(query.json().data.activeApiKeyCount, 0);
});

test('logout ends the session; an expired session is signed out', async () => {
  const browser = await signIn('leaver');
  const sessionId = browser.cookies.cds_session!;
  const res = await graphql(t, browser, 'mutation { logoutUser { ok code message } }');
  assert.deepEqual(res.json().data.logoutUser, { ok: true, code: 'SUCCESS', message: 'Logged out successfully.' });
  assert.equal(browser.cookies.cds_session, undefined, 'the cookie is cleared');
  const replay = await graphql(
    t,
    { cookies: { cds_session: sessionId, csrftoken: browser.cookies.csrftoken! } },
    DOC.getApiKeys,
  );
  assert.equal(replay.json().errors[0].extensions.code, 'UNAUTHORIZED');

  const other = await signIn('sleeper');
  await t.database.db
    .updateTable('sessions')
    .set({ expires_at: sql`now() - interval '1 second'` })
    .execute();
  assert.equal((await graphql(t, other, DOC.getApiKeys)).json().errors[0].extensions.code, 'UNAUTHORIZED');
});

test('queries deeper or wider than the limits are refused', async () => {
  const browser = await signIn('greedy');
  const wide = `{ ${Array.from({ length: 250 }, (_, i) => `a${i}: activeApiKeyCount`).join(' ')} }`;
  const res = await graphql(t, browser, wide);
  assert.equal(res.statusCode, 400);
  assert.match(res.json().errors[0].message, /more than 200 fields/);
});
