// The IETF draft's rate-limit fields beside the older ones, and conditional requests that cost nothing (issue 30):
// `RateLimit-Policy: "default";q=LIMIT;w=1` and `RateLimit: "default";r=REMAINING;t=SECONDS`; a 304 gives its count
// back, so a client polling with ETags under a limit of 3 gets ten 304s in one second; it still needs a valid key.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { chapter } from './factories.ts';
import { tickingTimers } from './fake-clock.ts';

// The limit's one-second windows on the test's clock: a burst never straddles two windows.
let now = Date.now();
const clock = () => now;
const freshSecond = () => (now = (Math.floor(now / 1000) + 1) * 1000 + 5);

let t: TestApp;
let key: string;
before(async () => {
  t = await buildTestApp({
    env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required', RATE_LIMIT_PER_SECOND: '3' },
    clock,
    timers: tickingTimers(),
  });
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
  const browser = await devSignIn(t, 'poller');
  key = (await graphql(t, browser, DOC.createApiKey, { name: 'poll', expiresAt: inDays(5) })).json().data.createApiKey
    .rawKey;
});
after(() => t.close());

const get = (headers: Record<string, string> = {}, url = '/api/v0/chapters/london') =>
  t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });

test('RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers) beside RateLimit-Limit/-Remaining/-Reset', async () => {
  freshSecond();
  const first = await get();
  assert.equal(first.statusCode, 200);
  assert.equal(first.headers['ratelimit-policy'], '"default";q=3;w=1');
  assert.equal(first.headers.ratelimit, '"default";r=2;t=1');
  assert.equal(first.headers['ratelimit-limit'], '3');
  assert.equal(first.headers['ratelimit-remaining'], '2');
  assert.equal(first.headers['ratelimit-reset'], '1');
  assert.equal((await get()).headers.ratelimit, '"default";r=1;t=1');
  assert.equal((await get()).headers.ratelimit, '"default";r=0;t=1');
  const refused = await get();
  assert.equal(refused.statusCode, 429);
  assert.equal(refused.headers['ratelimit-policy'], '"default";q=3;w=1');
  assert.equal(refused.headers.ratelimit, '"default";r=0;t=1');
  assert.equal(refused.headers['retry-after'], '1');
});

test('the policy follows the configured limit', async () => {
  const other = await buildTestApp({ env: { RATE_LIMIT_PER_SECOND: '25' }, sharedDatabase: t.database, clock });
  try {
    const res = await other.app.inject({ method: 'GET', url: '/api/v0/chapters/london' });
    assert.equal(res.headers['ratelimit-policy'], '"default";q=25;w=1');
    assert.equal(res.headers.ratelimit, '"default";r=24;t=1');
  } finally {
    await other.close();
  }
});

test('ten 304s in one second under a limit of 3: all 304, and the limit is untouched', async () => {
  freshSecond();
  const first = await get();
  assert.equal(first.statusCode, 200);
  const etag = first.headers.etag as string;
  for (let i = 0; i < 10; i++) {
    const res = await get({ 'if-none-match': etag });
    assert.equal(res.statusCode, 304, `conditional request ${i + 1}`);
    assert.equal(res.headers['ratelimit-remaining'], '2', 'its count was given back');
    assert.equal(res.headers.ratelimit, '"default";r=2;t=1');
  }
  // The two requests left of the window are still there, then the limit.
  assert.equal((await get()).statusCode, 200);
  assert.equal((await get()).statusCode, 200);
  assert.equal((await get()).statusCode, 429);
});

test('a 304 built without the response cache gives its count back too', async () => {
  freshSecond();
  // A URL not yet cached: its answer is built, hashed and turned into a 304 as it is sent.
  const url = '/api/v0/chapters/?limit=7';
  const built = await get({}, url);
  assert.equal(built.headers['x-cache'], 'MISS');
  t.app.shared.cache.clear();
  const res = await get({ 'if-none-match': built.headers.etag as string }, url);
  assert.equal(res.statusCode, 304);
  assert.equal(res.headers['x-cache'], 'MISS');
  assert.equal(res.headers['ratelimit-remaining'], '2');
  assert.equal((await get()).headers['ratelimit-remaining'], '1');
});

test('a conditional request still needs a valid key', async () => {
  freshSecond();
  const etag = (await get()).headers.etag as string;
  const anonymous = await t.app.inject({
    method: 'GET',
    url: '/api/v0/chapters/london',
    headers: { 'if-none-match': etag },
  });
  assert.equal(anonymous.statusCode, 401);
  const wrong = await get({ 'if-none-match': etag, 'x-api-key': 'cds_wrong' });
  assert.equal(wrong.statusCode, 401);
});

test('browsers may read the new fields (CORS Access-Control-Expose-Headers)', async () => {
  freshSecond();
  const res = await get({ origin: 'https://example.org' });
  const exposed = String(res.headers['access-control-expose-headers']);
  for (const name of ['RateLimit-Policy', 'RateLimit', 'RateLimit-Limit', 'API-Key-Expiration', 'X-Request-Id'])
    assert.match(exposed, new RegExp(`(^|, )${name}(,|$)`), name);
});

test('the OpenAPI document names the new fields and says that a 304 does not consume the limit', async () => {
  const document = (await t.app.inject({ url: '/api/v0/openapi.json' })).json() as {
    info: { description: string };
    paths: Record<string, Record<string, { responses: Record<string, { description: string; headers: object }> }>>;
  };
  const detail = document.paths['/api/v0/chapters/{chapter_id}']!.get!;
  for (const name of ['RateLimit-Policy', 'RateLimit', 'API-Key-Expiration', 'X-Request-Id'])
    assert.ok(name in detail.responses['200']!.headers, name);
  assert.match(detail.responses['304']!.description, /does not consume the rate limit/);
  assert.match(document.info.description, /RateLimit-Policy/);
});

test('RATE_LIMIT_HEADERS=draft or legacy: one spelling, on routed, early and refused answers alike', async () => {
  const DRAFT = ['ratelimit-policy', 'ratelimit'];
  const LEGACY = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];
  for (const [fields, carried] of [
    ['draft', DRAFT],
    ['legacy', LEGACY],
  ] as const) {
    const one = await buildTestApp({
      env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required', RATE_LIMIT_PER_SECOND: '3', RATE_LIMIT_HEADERS: fields },
      clock,
      sharedDatabase: t.database,
    });
    try {
      const browser = await devSignIn(one, `fields-${fields}`);
      const raw = (await graphql(one, browser, DOC.createApiKey, { name: fields, expiresAt: inDays(5) })).json().data
        .createApiKey.rawKey as string;
      const base = await one.app.listen({ port: 0, host: '127.0.0.1' });
      freshSecond();
      const answers = [];
      // Routed (a miss), early (a hit of a remembered key), routed again (conditional), then refused.
      const earlyBefore = one.app.shared.cache.earlyHits;
      for (const headers of [{}, {}, { 'if-none-match': '"x"' }, {}] as Record<string, string>[])
        answers.push(await fetch(`${base}/api/v0/chapters/london`, { headers: { 'x-api-key': raw, ...headers } }));
      assert.equal(one.app.shared.cache.earlyHits, earlyBefore + 1, 'the second answer is an early one');
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 200, 200, 429],
        fields,
      );
      for (const res of answers) {
        for (const name of [...DRAFT, ...LEGACY])
          assert.equal(
            res.headers.get(name) !== null,
            (carried as readonly string[]).includes(name),
            `${fields} ${name}`,
          );
      }
      assert.equal(answers[3]!.headers.get('retry-after'), '1');
      if (fields === 'draft') assert.equal(answers[2]!.headers.get('ratelimit'), '"default";r=0;t=1');
      else assert.equal(answers[2]!.headers.get('ratelimit-remaining'), '0');
    } finally {
      await one.close();
    }
  }
});

test('a bad RATE_LIMIT_HEADERS is refused at start, naming the values', async () => {
  await assert.rejects(
    buildTestApp({ env: { RATE_LIMIT_HEADERS: 'all' }, sharedDatabase: t.database }),
    /RATE_LIMIT_HEADERS.*both.*draft.*legacy/s,
  );
});
