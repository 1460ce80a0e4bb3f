// X-API-Key on the REST operations: every way a key can be wrong, and the two REST_AUTH modes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { generateApiKey } from '../src/api-keys/api-keys.format.ts';
import { tickingTimers } from './fake-clock.ts';

let t: TestApp;
let raw: string;
// The app's timers (the lastUsedAt batches' wait, the known-keys memory's): a fake, so that wait costs no time.
const timers = tickingTimers();
// The app's time, on which keys expire: real time, moved forward by the expiry test instead of waiting.
let ahead = 0;
const clock = () => Date.now() + ahead;
before(async () => {
  t = await buildTestApp({
    env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' },
    captureLogs: true,
    timers,
    clock,
  });
  const browser = await devSignIn(t, 'reader');
  const created = (await graphql(t, browser, DOC.createApiKey, { name: 'reader key', expiresAt: inDays(7) })).json()
    .data.createApiKey;
  raw = created.rawKey;
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
  const browser = await devSignIn(t, 'user');
  const key = (await graphql(t, browser, DOC.createApiKey, { name: 'used', expiresAt: inDays(1) })).json().data
    .createApiKey;
  const lastUsed = async () =>
    (
      await t.database.db
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('uuid', '=', key.apiKey.uuid)
        .executeTakeFirstOrThrow()
    ).last_used_at;
  assert.equal(await lastUsed(), null);
  const sleeps = timers.sleeps.length;
  assert.equal((await get('/api/v0/chapters/', key.rawKey)).statusCode, 200);
  // Written once the batch's one-second wait (on the app's timers) has passed: a few turns of the event loop here.
  let at: Date | null = null;
  for (let turn = 0; turn < 100 && !at; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    at = await lastUsed();
  }
  assert.ok(timers.sleeps.slice(sleeps).includes(1000), 'the batch waits a second');
  assert.ok(at && Math.abs(Date.now() - at.getTime()) < 5000, `lastUsedAt ${at?.toISOString()}`);
});

test('revoked and expired keys are 401 on the very next request', async () => {
  const browser = await devSignIn(t, 'other');
  const make = async (name: string, expiresAt: string) =>
    (await graphql(t, browser, DOC.createApiKey, { name, expiresAt })).json().data.createApiKey;
  const a = await make('a', inDays(1));
  const b = await make('b', inDays(2));
  assert.equal((await get('/api/v0/chapters/', b.rawKey)).statusCode, 200);
  assert.equal((await get('/api/v0/chapters/', a.rawKey)).statusCode, 200);
  await graphql(t, browser, DOC.revokeApiKey, { uuid: a.apiKey.uuid });
  assert401(await get('/api/v0/chapters/', a.rawKey), 'revoked');
  // Two days later on the app's clock: b has expired (it was remembered as valid a moment ago); a still revoked.
  ahead = 2 * 86_400_000 + 1000;
  try {
    assert401(await get('/api/v0/chapters/', b.rawKey), 'expired');
    assert401(await get('/api/v0/chapters/', a.rawKey), 'revoked, later');
    assert.equal((await get('/api/v0/chapters/', raw)).statusCode, 200, 'the reader key (7 days) still serves');
  } finally {
    ahead = 0;
  }
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
