// X-API-Key on the REST operations: every way a key can be wrong, and the two REST_AUTH modes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { generateApiKey } from '../src/api-keys/api-keys.format.ts';

let t: TestApp;
let raw: string;
let uuid: string;
before(async () => {
  t = await buildTestApp({ env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' }, captureLogs: true });
  const browser = await devSignIn(t, 'reader');
  const created = (await graphql(t, browser, DOC.createApiKey, { name: 'reader key', expiresAt: inDays(7) })).json()
    .data.createApiKey;
  raw = created.rawKey;
  uuid = created.apiKey.uuid;
});
after(async () => {
  assert.ok(!t.logs().includes(raw), 'the raw key reached the logs');
  await t.close();
});

const get = (url: string, key?: string) =>
  t.app.inject({ method: 'GET', url, headers: key === undefined ? {} : { 'x-api-key': key } });

function assert401(res: Awaited<ReturnType<typeof get>>, label: string) {
  assert.equal(res.statusCode, 401, label);
  assert.deepEqual(res.json(), { detail: "Missing or invalid API key in 'X-API-Key' header" }, label);
  assert.match(res.headers['www-authenticate'] as string, /^ApiKey /, label);
  assert.match(res.headers['content-type'] as string, /^application\/json/, label);
}

test('a valid key reads every kind of operation', async () => {
  for (const url of ['/api/v0/chapters/', '/api/v0/issues/', '/api/v0/chapters/none']) {
    const res = await get(url, raw);
    assert.notEqual(res.statusCode, 401, url);
  }
});

test('missing, empty, malformed, well-formed but unknown, and tampered keys are 401', async () => {
  assert401(await get('/api/v0/chapters/'), 'missing');
  assert401(await get('/api/v0/chapters/', ''), 'empty');
  assert401(await get('/api/v0/chapters/', 'not-a-key'), 'malformed');
  assert401(await get('/api/v0/chapters/', generateApiKey().raw), 'unknown');
  const flipped = raw.slice(0, 10) + (raw[10] === 'A' ? 'B' : 'A') + raw.slice(11);
  assert401(await get('/api/v0/chapters/', flipped), 'tampered (checksum)');
  assert401(await get('/api/v0/chapters/london', 'nope'), 'detail');
  assert401(await get('/api/v0/chapters/', `${raw}x`), 'too long');
});

test('HEAD needs the key too', async () => {
  assert.equal((await t.app.inject({ method: 'HEAD', url: '/api/v0/chapters/' })).statusCode, 401);
  assert.equal(
    (await t.app.inject({ method: 'HEAD', url: '/api/v0/chapters/', headers: { 'x-api-key': raw } })).statusCode,
    200,
  );
});

test('the welcome object and the API documentation are public', async () => {
  assert.equal((await get('/api/v0/')).statusCode, 200);
  assert.equal((await get('/api/v0/openapi.json')).statusCode, 200);
  assert.equal((await get('/api/v0/docs')).statusCode < 400, true);
});

test('lastUsedAt is recorded within a second of a successful use', async () => {
  await get('/api/v0/chapters/', raw);
  await new Promise((r) => setTimeout(r, 1300));
  const row = await t.database.db
    .selectFrom('api_keys')
    .select('last_used_at')
    .where('uuid', '=', uuid)
    .executeTakeFirstOrThrow();
  assert.ok(row.last_used_at && Date.now() - row.last_used_at.getTime() < 5000);
});

test('revoked and expired keys are 401 on the very next request', async () => {
  const browser = await devSignIn(t, 'other');
  const make = async (name: string, expiresAt: string) =>
    (await graphql(t, browser, DOC.createApiKey, { name, expiresAt })).json().data.createApiKey;
  const a = await make('a', inDays(1));
  const b = await make('b', new Date(Date.now() + 1500).toISOString());
  assert.equal((await get('/api/v0/chapters/', b.rawKey)).statusCode, 200);
  assert.equal((await get('/api/v0/chapters/', a.rawKey)).statusCode, 200);
  await graphql(t, browser, DOC.revokeApiKey, { uuid: a.apiKey.uuid });
  assert401(await get('/api/v0/chapters/', a.rawKey), 'revoked');
  await new Promise((r) => setTimeout(r, 1600));
  assert401(await get('/api/v0/chapters/', b.rawKey), 'expired');
});

test('REST_AUTH=optional serves anonymous reads but still refuses a bad key', async () => {
  const open = await buildTestApp({ env: { REST_AUTH: 'optional' } });
  try {
    assert.equal((await open.app.inject({ method: 'GET', url: '/api/v0/chapters/' })).statusCode, 200);
    const bad = await open.app.inject({ method: 'GET', url: '/api/v0/chapters/', headers: { 'x-api-key': 'bad' } });
    assert401(bad, 'optional mode, bad key');
  } finally {
    await open.close();
  }
});
