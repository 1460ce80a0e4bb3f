// Rotating an API key (issue 30): a new key with the same name and expiry, shown once; the old one keeps working for
// the grace period and then stops, on every instance; allowed at the limit of active keys. Time is the app's clock,
// moved by the test instead of waited for.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addInstancesOnRedis, buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, type Browser } from './auth.ts';
import { chapter } from './factories.ts';
import { tickingTimers } from './fake-clock.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';

const HOUR = 3_600_000;
const ENV = { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' };
const ROTATE = `mutation Rotate($uuid: UUID!, $hours: Int!) {
  rotateApiKey(uuid: $uuid, gracePeriodHours: $hours) {
    ok code message rawKey apiKey { uuid name expiresAt isRevoked expiresSoon }
  }
}`;
const KEYS = 'query { activeApiKeyCount apiKeys { uuid name expiresAt expiresSoon } }';

// The app's time: real time at the start, moved forward by the tests.
let now = Date.now();
const clock = () => now;
const timers = tickingTimers();

let t: TestApp;
let browser: Browser;
before(async () => {
  t = await buildTestApp({ env: ENV, clock, timers, captureLogs: true });
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
  // The writes moved the data version (each records its change): heard now, not at the app's next poll mid-test.
  await t.app.shared.watcher.refresh();
  browser = await devSignIn(t, 'rotator');
});
after(async () => {
  await t.close();
});

interface Created {
  rawKey: string;
  apiKey: { uuid: string; name: string; expiresAt: string };
}

async function createKey(target: TestApp, who: Browser, name: string, days = 30): Promise<Created> {
  const expiresAt = new Date(now + days * 86_400_000).toISOString();
  const res = await graphql(target, who, DOC.createApiKey, { name, expiresAt });
  const created = res.json().data.createApiKey;
  assert.equal(created.ok, true, res.body);
  return created as Created;
}

async function rotate(target: TestApp, who: Browser, uuid: string, hours: number) {
  const res = await graphql(target, who, ROTATE, { uuid, hours });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.rotateApiKey as {
    ok: boolean;
    code: string;
    message: string;
    rawKey: string | null;
    apiKey: { uuid: string; name: string; expiresAt: string; isRevoked: boolean; expiresSoon: boolean } | null;
  };
}

const read = (target: TestApp, key: string, url = '/api/v0/chapters/london') =>
  target.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

test('the new key works at once; the old one during the grace period and not after it', async () => {
  const old = await createKey(t, browser, 'deploy');
  assert.equal((await read(t, old.rawKey)).statusCode, 200);
  const rotated = await rotate(t, browser, old.apiKey.uuid, 2);
  assert.equal(rotated.ok, true);
  assert.equal(rotated.code, 'SUCCESS');
  assert.equal(rotated.message, 'API key rotated successfully.');
  assert.match(rotated.rawKey!, /^cds_[A-Za-z0-9_-]{49}$/);
  assert.notEqual(rotated.rawKey, old.rawKey);
  assert.equal(rotated.apiKey!.name, 'deploy');
  assert.equal(rotated.apiKey!.expiresAt, old.apiKey.expiresAt, 'the same expiry');
  assert.notEqual(rotated.apiKey!.uuid, old.apiKey.uuid);

  assert.equal((await read(t, rotated.rawKey!)).statusCode, 200, 'the new key at once');
  const during = await read(t, old.rawKey);
  assert.equal(during.statusCode, 200, 'the old key during the grace period');
  // The old key's expiry is now the end of the grace period, and it says so.
  const graceEnd = Date.parse(during.headers['api-key-expiration'] as string);
  assert.ok(Math.abs(graceEnd - (now + 2 * HOUR)) < 1000, String(during.headers['api-key-expiration']));

  now += 2 * HOUR - 1000;
  assert.equal((await read(t, old.rawKey)).statusCode, 200, 'a second before the end');
  now += 2000;
  assert.equal((await read(t, old.rawKey)).statusCode, 401, 'after the grace period');
  assert.equal((await read(t, rotated.rawKey!)).statusCode, 200, 'the new key still');
  assert.ok(!t.logs().includes(rotated.rawKey!), 'the new raw key reached the logs');
  assert.ok(!t.logs().includes(old.rawKey), 'the old raw key reached the logs');
});

test('a grace period of 0 revokes the old key at once; over 168 hours, or negative, is refused', async () => {
  const old = await createKey(t, browser, 'instant');
  assert.equal((await read(t, old.rawKey)).statusCode, 200);
  for (const hours of [169, -1, 100_000]) {
    const refused = await rotate(t, browser, old.apiKey.uuid, hours);
    assert.deepEqual(
      { ok: refused.ok, code: refused.code, rawKey: refused.rawKey, apiKey: refused.apiKey },
      { ok: false, code: 'INVALID_GRACE_PERIOD', rawKey: null, apiKey: null },
      String(hours),
    );
  }
  assert.equal((await read(t, old.rawKey)).statusCode, 200, 'nothing changed');
  const rotated = await rotate(t, browser, old.apiKey.uuid, 0);
  assert.equal(rotated.ok, true);
  assert.equal((await read(t, old.rawKey)).statusCode, 401, 'at once');
  assert.equal((await read(t, rotated.rawKey!)).statusCode, 200);
  const again = await rotate(t, browser, old.apiKey.uuid, 1);
  assert.equal(again.code, 'ALREADY_ROTATED');
  const maximum = await rotate(t, browser, rotated.apiKey!.uuid, 168);
  assert.equal(maximum.ok, true, '168 hours is allowed');
});

test('rotation works with 3 active keys; the limit holds again once the grace period ends', async () => {
  const user = await devSignIn(t, 'three-keys');
  const keys = [await createKey(t, user, 'one'), await createKey(t, user, 'two'), await createKey(t, user, 'three')];
  const full = await graphql(t, user, DOC.createApiKey, {
    name: 'four',
    expiresAt: new Date(now + 86_400_000).toISOString(),
  });
  assert.equal(full.json().data.createApiKey.code, 'LIMIT_REACHED');
  const rotated = await rotate(t, user, keys[0]!.apiKey.uuid, 1);
  assert.equal(rotated.ok, true, rotated.message);
  assert.equal((await graphql(t, user, KEYS)).json().data.activeApiKeyCount, 4, 'the old one during its grace');
  now += HOUR + 1000;
  const listed = (await graphql(t, user, KEYS)).json().data;
  assert.equal(listed.activeApiKeyCount, 3);
  assert.deepEqual(listed.apiKeys.map((key: { name: string }) => key.name).sort(), ['one', 'three', 'two']);
  assert.equal((await read(t, keys[0]!.rawKey)).statusCode, 401);
  assert.equal((await read(t, rotated.rawKey!)).statusCode, 200);
});

// How many of `raws` authenticate a REST read now. A second passes first: the per-key rate limit reads the app clock.
async function working(raws: readonly string[]): Promise<number> {
  now += 1000;
  const answers = await Promise.all(raws.map((raw) => read(t, raw)));
  return answers.filter((res) => res.statusCode === 200).length;
}

test('one key per rotation chain is in grace: rotating the new key again ends the older one, never past 3 + 3', async () => {
  const user = await devSignIn(t, 'chain-rotator');
  const heads = [await createKey(t, user, 'a'), await createKey(t, user, 'b'), await createKey(t, user, 'c')];
  const raws = heads.map((key) => key.rawKey);
  for (let round = 0; round < 3; round++)
    for (const [i, head] of heads.entries()) {
      const rotated = await rotate(t, user, head.apiKey.uuid, 168);
      assert.equal(rotated.ok, true, rotated.message);
      heads[i] = { rawKey: rotated.rawKey!, apiKey: rotated.apiKey! };
      raws.push(rotated.rawKey!);
      assert.ok((await working(raws)) <= 6, `round ${round}, chain ${i}`);
      assert.match(rotated.message, round === 0 ? /^API key rotated successfully\.$/ : /stopped working/);
    }
  assert.equal(await working(raws), 6, 'each chain: its newest key and the one before');
  const newest = await Promise.all(raws.slice(-6).map((raw) => read(t, raw)));
  assert.deepEqual(
    newest.map((res) => res.statusCode),
    [200, 200, 200, 200, 200, 200],
  );
  assert.equal((await graphql(t, user, KEYS)).json().data.activeApiKeyCount, 6);
  const more = await graphql(t, user, DOC.createApiKey, {
    name: 'd',
    expiresAt: new Date(now + 86_400_000).toISOString(),
  });
  assert.equal(more.json().data.createApiKey.code, 'LIMIT_REACHED');
});

test('20 simultaneous rotations of keys in a chain leave one key in grace per chain', async () => {
  const user = await devSignIn(t, 'racing-rotator');
  const first = [await createKey(t, user, 'x'), await createKey(t, user, 'y'), await createKey(t, user, 'z')];
  const second: Awaited<ReturnType<typeof rotate>>[] = [];
  for (const key of first) second.push(await rotate(t, user, key.apiKey.uuid, 168));
  const raced = await Promise.all(
    Array.from({ length: 20 }, (_, i) => rotate(t, user, second[i % 3]!.apiKey!.uuid, 168)),
  );
  const won = raced.filter((result) => result.ok);
  assert.equal(won.length, 3, 'each key rotated once');
  assert.ok(raced.every((result) => result.ok || result.code === 'ALREADY_ROTATED'));
  const raws = [...first.map((key) => key.rawKey), ...[...second, ...won].map((result) => result.rawKey!)];
  assert.equal(await working(raws), 6);
  assert.equal(await working(first.map((key) => key.rawKey)), 0, 'the first keys stopped');
});

test("someone else's key, an unknown uuid, a revoked key and signing out are refused", async () => {
  const owner = await devSignIn(t, 'owner');
  const mine = await createKey(t, owner, 'mine');
  const other = await devSignIn(t, 'someone-else');
  assert.equal((await rotate(t, other, mine.apiKey.uuid, 1)).code, 'NOT_FOUND');
  assert.equal((await rotate(t, owner, '00000000-0000-4000-8000-000000000000', 1)).code, 'NOT_FOUND');
  await graphql(t, owner, DOC.revokeApiKey, { uuid: mine.apiKey.uuid });
  assert.equal((await rotate(t, owner, mine.apiKey.uuid, 1)).code, 'NOT_ACTIVE');
  const anonymous = await graphql(t, undefined, ROTATE, { uuid: mine.apiKey.uuid, hours: 1 });
  assert.equal(anonymous.json().errors[0].extensions.code, 'UNAUTHORIZED');
});

test('apiKeys flags the keys that expire within 7 days', async () => {
  const user = await devSignIn(t, 'expiring');
  await createKey(t, user, 'soon', 3);
  await createKey(t, user, 'later', 30);
  const listed = (await graphql(t, user, KEYS)).json().data.apiKeys as { name: string; expiresSoon: boolean }[];
  assert.deepEqual(Object.fromEntries(listed.map((key) => [key.name, key.expiresSoon])), { soon: true, later: false });
});

test('API-Key-Expiration is on every answer to a key: built, cached, 304, HEAD, 404, 400; not without a key', async () => {
  const user = await devSignIn(t, 'expiry-header');
  const created = await createKey(t, user, 'header', 10);
  const expected = `${created.apiKey.expiresAt.slice(0, 19)}Z`;
  const first = await read(t, created.rawKey);
  const cached = await read(t, created.rawKey);
  assert.equal(cached.headers['x-cache'], 'HIT');
  const notModified = await t.app.inject({
    method: 'GET',
    url: '/api/v0/chapters/london',
    headers: { 'x-api-key': created.rawKey, 'if-none-match': first.headers.etag as string },
  });
  assert.equal(notModified.statusCode, 304);
  const head = await t.app.inject({
    method: 'HEAD',
    url: '/api/v0/chapters/london',
    headers: { 'x-api-key': created.rawKey },
  });
  const missing = await read(t, created.rawKey, '/api/v0/chapters/no-such-chapter');
  assert.equal(missing.statusCode, 404);
  const invalid = await read(t, created.rawKey, '/api/v0/chapters/?page=0');
  assert.equal(invalid.statusCode, 400);
  for (const [label, res] of Object.entries({ first, cached, notModified, head, missing, invalid }))
    assert.equal(res.headers['api-key-expiration'], expected, label);
  assert.match(expected, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'RFC 3339');
  const anonymous = await t.app.inject({ method: 'GET', url: '/api/v0/chapters/london' });
  assert.equal(anonymous.statusCode, 401);
  assert.equal(anonymous.headers['api-key-expiration'], undefined);
});

test('with Redis, two instances: the rotated key stops on the other one at once (grace 0) and at the end', async () => {
  let redis: PrivateRedis | undefined;
  const instances: TestApp[] = [];
  try {
    redis = await startPrivateRedis();
    const env = { ...ENV, REDIS_URL: redis.url, REDIS_PREFIX: 'rotation-test:' };
    await addInstancesOnRedis(instances, 2, () =>
      buildTestApp({ env, sharedDatabase: t.database, clock, timers: tickingTimers() }),
    );
    const [one, two] = instances as [TestApp, TestApp];
    const user = await devSignIn(one, 'two-instances');
    const immediate = await createKey(one, user, 'immediate');
    const graceful = await createKey(one, user, 'graceful');
    // Both keys remembered as valid by the second instance.
    for (const key of [immediate, graceful]) assert.equal((await read(two, key.rawKey)).statusCode, 200);

    const now0 = await rotate(one, user, immediate.apiKey.uuid, 0);
    assert.equal((await read(two, immediate.rawKey)).statusCode, 401, 'revoked on the other instance at once');
    assert.equal((await read(two, now0.rawKey!)).statusCode, 200, 'the new key on the other instance at once');

    const later = await rotate(one, user, graceful.apiKey.uuid, 1);
    const during = await read(two, graceful.rawKey);
    assert.equal(during.statusCode, 200, 'during the grace period');
    assert.ok(Date.parse(during.headers['api-key-expiration'] as string) <= now + HOUR, 'its new expiry');
    now += HOUR + 1000;
    assert.equal((await read(two, graceful.rawKey)).statusCode, 401, 'after it, on the other instance');
    assert.equal((await read(one, graceful.rawKey)).statusCode, 401, 'and on this one');
    assert.equal((await read(two, later.rawKey!)).statusCode, 200);
  } finally {
    for (const instance of instances) await instance.close();
    await redis?.stop();
  }
});
