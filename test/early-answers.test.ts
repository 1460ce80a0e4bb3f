// Cached hits answered before the routes (src/api/v0/rest/early-answers.ts, issue 32): through a listening server,
// since app.inject() goes straight to Fastify and never meets them. An early answer must be the answer the routes
// would have sent (the same body, the same headers but the request's own id and count), and must never skip the
// key, the limit or a change of the data.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';
import { startPrivateRedis } from './redis-server.ts';
import { serverUrl } from './helpers.ts';

const ENV = { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required', RATE_LIMIT_PER_SECOND: '10' };

// The limit's windows on the test's own clock: a burst never straddles two seconds.
let now = Date.now();
const clock = () => now;
function freshSecond(): void {
  now = (Math.floor(now / 1000) + 1) * 1000 + 5;
}

let t: TestApp;
let origin = '';
let key = '';
let keyUuid = '';

async function createKey(target: TestApp, login: string, name: string, days = 3) {
  const browser = await devSignIn(target, login);
  const created = (await graphql(target, browser, DOC.createApiKey, { name, expiresAt: inDays(days) })).json().data
    .createApiKey as { rawKey: string; apiKey: { uuid: string } };
  return { raw: created.rawKey, uuid: created.apiKey.uuid, browser };
}

before(async () => {
  t = await buildTestApp({ env: ENV, importBundled: true, clock });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  ({ raw: key, uuid: keyUuid } = await createKey(t, 'early', 'early'));
});
after(() => t.close());

const get = (url: string, headers: Record<string, string> = {}, base = origin) =>
  fetch(base + url, { headers: { 'x-api-key': key, ...headers } });

/** The response cache's early hits so far, as GET /metrics tells them. */
async function earlyHits(base = origin): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('cds_response_cache_early_hits_total '));
  return Number(line?.split(' ')[1]);
}

/** Every header but those that are the request's own (its id, its count, the date). */
function comparable(res: Response): Record<string, string> {
  const own = new Set(['x-request-id', 'date', 'ratelimit-remaining', 'ratelimit', 'keep-alive', 'connection']);
  return Object.fromEntries([...res.headers].filter(([name]) => !own.has(name)).sort());
}

test('an early answer is the answer the routes give: body, status and every header', async () => {
  const urls = [
    '/api/v0/chapters/london',
    // A page with a Link header, whose addresses start with this request's origin.
    '/api/v0/chapters/?limit=2',
    '/api/v0/repositories/?q=' + encodeURIComponent('stars:>=0') + '&limit=3',
    '/api/v0/projects/?limit=1&page=2',
    // A route's own header (the change log's X-Poll-Interval), kept with its cached answer.
    '/api/v0/changes/?limit=2',
  ];
  for (const url of urls) {
    freshSecond();
    const miss = await get(url);
    assert.equal(miss.status, 200, url);
    assert.equal(miss.headers.get('x-cache'), 'MISS', url);
    const body = await miss.text();
    // A conditional request that does not match is answered by the routes, from the cache: the reference.
    const routed = await get(url, { 'if-none-match': '"other"' });
    assert.equal(routed.headers.get('x-cache'), 'HIT', url);
    const before = await earlyHits();
    const early = await get(url);
    assert.equal(await earlyHits(), before + 1, `${url}: answered early`);
    assert.equal(early.status, 200, url);
    assert.equal(await early.text(), body, url);
    assert.equal(await routed.text(), body, url);
    assert.deepEqual(comparable(early), comparable(routed), url);
    assert.match(early.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(early.headers.get('ratelimit-remaining'), '7', `${url}: the third request of its second`);
    assert.equal(early.headers.get('ratelimit'), '"default";r=7;t=1');
    if (url.includes('limit=2'))
      assert.match(early.headers.get('link') ?? '', new RegExp(`<${origin}${url.split('?')[0]}`));
    if (url.startsWith('/api/v0/changes/')) assert.equal(early.headers.get('x-poll-interval'), '60');
  }
});

test('CORS fields only for a page (a request with Origin), early or routed; Vary names Origin either way', async () => {
  const url = '/api/v0/chapters/?limit=1&offset=0';
  const page = { origin: 'https://elsewhere.example' };
  freshSecond();
  const miss = await get(url);
  assert.equal(miss.headers.get('x-cache'), 'MISS');
  const routed = await get(url, { 'if-none-match': '"other"' });
  const routedPage = await get(url, { ...page, 'if-none-match': '"other"' });
  const before = await earlyHits();
  const early = await get(url);
  const earlyPage = await get(url, page);
  assert.equal(await earlyHits(), before + 2);
  for (const res of [miss, routed, early]) {
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-expose-headers'), null);
  }
  for (const res of [routedPage, earlyPage]) {
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /(^|, )RateLimit-Remaining(,|$)/);
  }
  for (const res of [miss, routed, early, routedPage, earlyPage])
    assert.match(res.headers.get('vary') ?? '', /(^|, )Origin(,|$)/);
  assert.deepEqual(comparable(earlyPage), comparable(routedPage));
  // JSON carries no field only a rendered page uses.
  assert.equal(early.headers.get('x-frame-options'), null);
  assert.equal(early.headers.get('referrer-policy'), null);
});

test("a client's plain request id is echoed; the request metrics count early answers under their route", async () => {
  freshSecond();
  await get('/api/v0/chapters/london');
  const before = await earlyHits();
  const res = await get('/api/v0/chapters/london', { 'x-request-id': 'trace.42_a' });
  assert.equal(await earlyHits(), before + 1);
  assert.equal(res.headers.get('x-request-id'), 'trace.42_a');
  const metrics = await (await fetch(`${origin}/metrics`)).text();
  assert.match(
    metrics,
    /http_requests_total\{method="GET",route="\/api\/v0\/chapters\/:chapter_id",status_code="200"\} \d+/,
  );
});

/** A GET with these very headers (fetch does not let a caller choose Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin);
    http
      .get({ hostname, port, path: url, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res));
      })
      .on('error', reject);
  });
}

test("hit after hit, one entry's early answers carry each request's own Link origin, CORS fields and key expiry", async () => {
  const url = '/api/v0/chapters/?limit=2&page=3';
  const other = await createKey(t, 'early-other', 'other', 9);
  freshSecond();
  assert.equal((await get(url)).headers.get('x-cache'), 'MISS');
  const before = await earlyHits();
  // The entry's Link is made again for another Host, and not kept from the one before.
  const here = new URL(origin).host;
  for (const host of [here, 'api.example.org', here, 'api.example.org:8443', 'api.example.org:8443']) {
    freshSecond();
    const early = await rawGet(url, { host, 'x-api-key': key });
    const routed = await rawGet(url, { host, 'x-api-key': key, 'if-none-match': '"other"' });
    assert.equal(early.headers.link, routed.headers.link, host);
    assert.ok(String(early.headers.link).startsWith(`<http://${host}/api/v0/chapters/?`), host);
  }
  // Two keys and a page's request in turn: each answer its own key's expiry, CORS fields only with Origin. (The other
  // key's first request is the routes': a key is answered early once it is remembered.)
  freshSecond();
  assert.equal((await get('/api/v0/chapters/london', { 'x-api-key': other.raw })).status, 200);
  const expiries = new Set<string>();
  for (const [i, raw] of [key, other.raw, key, other.raw, key].entries()) {
    freshSecond();
    const headers: Record<string, string> = i % 2 === 1 ? { origin: 'https://elsewhere.example' } : {};
    const early = await get(url, { ...headers, 'x-api-key': raw });
    const routed = await get(url, { ...headers, 'x-api-key': raw, 'if-none-match': '"other"' });
    assert.deepEqual(comparable(early), comparable(routed), `answer ${i}`);
    assert.equal(early.headers.get('access-control-allow-origin'), i % 2 === 1 ? '*' : null, `answer ${i}`);
    expiries.add(early.headers.get('api-key-expiration') ?? '');
  }
  assert.equal(expiries.size, 2);
  assert.equal(await earlyHits(), before + 10);
});

test('no key, a wrong key, an expired key: never the cached answer', async () => {
  freshSecond();
  const warm = await get('/api/v0/chapters/london');
  assert.equal(warm.status, 200);
  const before = await earlyHits();
  for (const header of [
    {} as Record<string, string>,
    { 'x-api-key': 'cds_forged' },
    { 'x-api-key': key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A') },
  ]) {
    const res = await fetch(`${origin}/api/v0/chapters/london`, { headers: header });
    assert.equal(res.status, 401);
    assert.ok(!(await res.text()).includes('London'));
  }
  // Past the key's expiry on the app's clock: the remembered key is forgotten, the routes refuse it.
  const saved = now;
  now += 4 * 86_400_000;
  try {
    const expired = await get('/api/v0/chapters/london');
    assert.equal(expired.status, 401);
  } finally {
    now = saved;
  }
  assert.equal(await earlyHits(), before);
});

test('the limit counts early and routed answers alike, once each; past it a 429 with its body', async () => {
  freshSecond();
  await get('/api/v0/chapters/london');
  const statuses: number[] = [];
  const remaining: string[] = [];
  for (let i = 0; i < 9; i++) {
    // Every other one through the routes (a conditional request that does not match).
    const res = await get('/api/v0/chapters/london', i % 2 ? { 'if-none-match': '"other"' } : {});
    statuses.push(res.status);
    remaining.push(res.headers.get('ratelimit-remaining') ?? '');
  }
  assert.deepEqual(statuses, Array(9).fill(200));
  assert.deepEqual(remaining, ['8', '7', '6', '5', '4', '3', '2', '1', '0']);
  const limited = await get('/api/v0/chapters/london');
  assert.equal(limited.status, 429);
  assert.deepEqual(await limited.json(), { detail: 'Too many requests.' });
  assert.equal(limited.headers.get('retry-after'), '1');
  assert.equal(limited.headers.get('ratelimit-remaining'), '0');
  freshSecond();
  assert.equal((await get('/api/v0/chapters/london')).status, 200);
});

test('a key revoked here is refused at once; a data change is never answered from before it', async () => {
  const other = await createKey(t, 'early-revoked', 'doomed');
  freshSecond();
  const as = (raw: string) => fetch(`${origin}/api/v0/chapters/london`, { headers: { 'x-api-key': raw } });
  assert.equal((await as(other.raw)).status, 200);
  assert.equal((await as(other.raw)).headers.get('x-cache'), 'HIT');
  const revoked = (await graphql(t, other.browser, DOC.revokeApiKey, { uuid: other.uuid })).json().data.revokeApiKey;
  assert.equal(revoked.ok, true);
  assert.equal((await as(other.raw)).status, 401);

  freshSecond();
  await get('/api/v0/chapters/london');
  assert.equal((await get('/api/v0/chapters/london')).headers.get('x-cache'), 'HIT');
  await bumpDataVersion(t.database.db);
  await t.app.shared.changes.dataChanged();
  const after = await get('/api/v0/chapters/london');
  assert.equal(after.status, 200);
  assert.equal(after.headers.get('x-cache'), 'MISS');
  assert.ok(keyUuid);
});

/** A GET with these header lines as they are, in their case and with repeats (name, value, name, value...). */
function linesGet(url: string, lines: string[]): Promise<{ res: http.IncomingMessage; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin);
    http
      // (Given as lines, the headers are sent as they are: Host too must be one of them.)
      .get({ hostname, port, path: url, headers: ['Host', `${hostname}:${port}`, ...lines] }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ res, body }));
      })
      .on('error', reject);
  });
}

test('the header fields are read in any case; one of them sent twice is left to the routes, which answer as before', async () => {
  freshSecond();
  const url = '/api/v0/chapters/?limit=2';
  const routed = await get(url);
  const before = await earlyHits();
  const cased = await linesGet(url, ['X-API-KEY', key, 'ORIGIN', 'https://a.example', 'X-Request-ID', 'trace.7']);
  assert.equal(cased.res.statusCode, 200);
  assert.equal(cased.body, await routed.text());
  assert.equal(cased.res.headers['x-request-id'], 'trace.7');
  assert.equal(cased.res.headers['access-control-allow-origin'], '*');
  assert.equal(await earlyHits(), before + 1, 'answered early');
  // Twice: Node joins the two values, so a key sent twice is no key; two Accept are read by the routes' negotiation.
  const twice = await linesGet(url, ['x-api-key', key, 'X-Api-Key', key]);
  const joined = await t.app.inject({ url, headers: { 'x-api-key': `${key}, ${key}` } });
  assert.equal(twice.res.statusCode, joined.statusCode);
  assert.equal(twice.res.statusCode, 401);
  const accepts = await linesGet(url, ['x-api-key', key, 'accept', 'application/json', 'Accept', '*/*']);
  assert.equal(accepts.res.statusCode, 200);
  assert.equal(accepts.body, cased.body);
  const ids = await linesGet(url, ['x-api-key', key, 'x-request-id', 'a', 'x-request-id', 'b']);
  assert.equal(ids.res.statusCode, 200);
  assert.notEqual(ids.res.headers['x-request-id'], 'a');
  assert.equal(await earlyHits(), before + 1, 'none of them answered early');
});

test('what the early answers leave to the routes is answered as before', async () => {
  freshSecond();
  await get('/api/v0/chapters/?limit=2');
  const before = await earlyHits();
  // Another media type than the cached one; HEAD; a URL the router does not take; a body on a GET.
  const csv = await get('/api/v0/chapters/?limit=2', { accept: 'text/csv' });
  assert.equal(csv.status, 200);
  assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
  const json = await get('/api/v0/chapters/?limit=2', { accept: 'application/json' });
  assert.equal(json.headers.get('content-type'), 'application/json; charset=utf-8');
  const head = await fetch(`${origin}/api/v0/chapters/?limit=2`, { method: 'HEAD', headers: { 'x-api-key': key } });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), json.headers.get('content-length'));
  const stray = await get('/api/v0/chapters//?limit=2');
  const routed = await t.app.inject({ url: '/api/v0/chapters//?limit=2', headers: { 'x-api-key': key } });
  assert.equal(stray.status, routed.statusCode);
  // Only the plain GET with JSON was answered early.
  assert.equal(await earlyHits(), before + 1);
});

test(
  'with Redis: early answers share the limit over two instances, take in revocations, and go on if Redis stops',
  { skip: serverUrl ? false : "runs in CI's PostgreSQL pass only (it starts a Redis of its own)" },
  async () => {
    const redis = await startPrivateRedis();
    let running = true;
    const env = { ...ENV, REDIS_URL: redis.url, REDIS_PREFIX: 'early-test:' };
    const one = await buildTestApp({ env, sharedDatabase: t.database, clock });
    const two = await buildTestApp({ env, sharedDatabase: t.database, clock });
    try {
      for (const app of [one, two]) {
        const client = app.app.shared.redis!;
        if (client.status !== 'ready') await once(client, 'ready');
      }
      const [a, b] = [
        await one.app.listen({ port: 0, host: '127.0.0.1' }),
        await two.app.listen({ port: 0, host: '127.0.0.1' }),
      ];
      const other = await createKey(one, 'early-redis', 'shared');
      const as = (base: string, raw = other.raw) =>
        fetch(`${base}/api/v0/chapters/london`, { headers: { 'x-api-key': raw } });
      freshSecond();
      // Warm: both caches, both memories of keys.
      for (const base of [a, b, a, b]) assert.equal((await as(base)).status, 200);
      freshSecond();
      const before = (await earlyHits(a)) + (await earlyHits(b));
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await as(i % 2 ? b : a)).status);
      assert.deepEqual(statuses, [...Array(10).fill(200), 429], 'one limit over both instances');
      assert.equal((await earlyHits(a)) + (await earlyHits(b)), before + 10);

      // Revoked through the first instance: the second learns it with its next count.
      freshSecond();
      const revoked = (await graphql(one, other.browser, DOC.revokeApiKey, { uuid: other.uuid })).json().data
        .revokeApiKey;
      assert.equal(revoked.ok, true);
      assert.equal((await as(b)).status, 401);

      // Redis stops: the early answers go on, counted by each instance on its own.
      await as(a, key);
      await redis.stop();
      running = false;
      freshSecond();
      const degraded = [];
      for (let i = 0; i < 4; i++) degraded.push((await as(i % 2 ? b : a, key)).status);
      assert.deepEqual(degraded, [200, 200, 200, 200]);
    } finally {
      await one.close();
      await two.close();
      if (running) await redis.stop();
    }
  },
);

test("request logs: an early answer writes Fastify's two lines under its request id, and never the key", async () => {
  const logged = await buildTestApp({ env: ENV, sharedDatabase: t.database, clock, captureLogs: true });
  try {
    const base = await logged.app.listen({ port: 0, host: '127.0.0.1' });
    const own = await createKey(logged, 'early-logs', 'logs');
    const as = () => fetch(`${base}/api/v0/chapters/london`, { headers: { 'x-api-key': own.raw } });
    freshSecond();
    await as();
    const before = await earlyHits(base);
    const res = await as();
    assert.equal(await earlyHits(base), before + 1);
    const id = res.headers.get('x-request-id')!;
    const lines = logged
      .logs()
      .split('\n')
      .filter((line) => line.includes(id))
      .map((line) => JSON.parse(line) as { msg: string; reqId: string; req?: { url: string }; res?: unknown });
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['incoming request', 'request completed'],
    );
    assert.equal(lines[0]!.req!.url, '/api/v0/chapters/london');
    assert.deepEqual(lines[1]!.res, { statusCode: 200 });
    assert.ok(!logged.logs().includes(own.raw), 'the raw key is never logged');
  } finally {
    await logged.close();
  }
});

test('behind a proxy, a page whose Link needs the forwarded origin is left to the routes; a detail is answered early', async () => {
  const proxied = await buildTestApp({ env: { ...ENV, TRUST_PROXY: 'true' }, sharedDatabase: t.database, clock });
  try {
    const base = await proxied.app.listen({ port: 0, host: '127.0.0.1' });
    const own = await createKey(proxied, 'early-proxy', 'proxy');
    const as = (url: string) =>
      fetch(base + url, {
        headers: { 'x-api-key': own.raw, 'x-forwarded-host': 'api.example.org', 'x-forwarded-proto': 'https' },
      });
    freshSecond();
    for (const url of ['/api/v0/chapters/?limit=2', '/api/v0/chapters/london']) await as(url);
    const before = await earlyHits(base);
    const page = await as('/api/v0/chapters/?limit=2');
    assert.equal(page.headers.get('x-cache'), 'HIT');
    assert.match(page.headers.get('link') ?? '', /^<https:\/\/api\.example\.org\/api\/v0\/chapters\//);
    assert.equal(await earlyHits(base), before, 'the page went to the routes');
    const detail = await as('/api/v0/chapters/london');
    assert.equal(detail.status, 200);
    assert.equal(await earlyHits(base), before + 1, 'the detail was answered early');
  } finally {
    await proxied.close();
  }
});
