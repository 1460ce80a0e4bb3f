// The edges of HTTP (issue 13, F6–F10, CORS and headers), through a real listening server where the
// socket matters: requests Node cannot parse, Fastify's own errors, overflowing numbers, object
// prototype names as parameters, CORS preflights and the security headers of every response.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { buildTestApp, type TestApp } from './app.ts';

let t: TestApp;
let production: TestApp;
let listed: TestApp;
let port = 0;

before(async () => {
  t = await buildTestApp();
  production = await buildTestApp({ env: { NODE_ENV: 'production' }, sharedDatabase: t.database });
  listed = await buildTestApp({ env: { CORS_ORIGINS: 'https://one.example' }, sharedDatabase: t.database });
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = Number(new URL(address).port);
});
after(async () => {
  await listed.close();
  await production.close();
  await t.close();
});

/** Sends raw bytes and reads until the server closes the socket. */
function raw(text: string): Promise<{ head: string; body: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = data.indexOf('\r\n\r\n');
      resolve({ head: data.slice(0, split), body: data.slice(split + 4), closed: true });
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error('the server kept the socket open')));
  });
}

const SECURITY = ['x-content-type-options: nosniff'];

test('a request Node cannot parse: 400 in our shape, Connection: close, security headers, socket closed', async () => {
  const res = await raw('GET /api/v0/chapters/?secret=1 HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
  assert.match(res.head, /^HTTP\/1\.1 400 /);
  assert.match(res.head, /\r\nConnection: close(\r\n|$)/i);
  for (const header of SECURITY) assert.ok(res.head.toLowerCase().includes(header.toLowerCase()), header);
  assert.deepEqual(JSON.parse(res.body), {
    message: 'Invalid request',
    errors: [{ loc: ['request'], msg: 'is not a valid HTTP request' }],
  });
  assert.ok(res.closed);
});

test('a malformed HEAD request gets the status and headers but no body', async () => {
  const res = await raw('HEAD /api/v0/chapters/ HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
  assert.match(res.head, /^HTTP\/1\.1 400 /);
  assert.match(res.head, /\r\nConnection: close/i);
  assert.equal(res.body, '');
});

test('headers over the size limit: 431 in our shape', async () => {
  const res = await raw(`GET /api/v0/chapters/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.match(res.head, /^HTTP\/1\.1 431 /);
  assert.deepEqual(JSON.parse(res.body), { message: 'Request header fields too large' });
});

test("Fastify's own 400 and 414 are in our shape and never echo the URL", async () => {
  const long = await t.app.inject({ method: 'GET', url: `/api/v0/chapters/${'x'.repeat(600)}` });
  assert.equal(long.statusCode, 414);
  assert.deepEqual(long.json(), { message: 'URI too long' });
  assert.equal(long.headers['x-content-type-options'], 'nosniff');
  const bad = await t.app.inject({ method: 'GET', url: '/api/v0/chapters/%E0%A4%A-secret' });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { message: 'Invalid request', errors: [{ loc: ['path'], msg: 'is not a valid URL' }] });
  assert.doesNotMatch(bad.body + long.body, /secret|xxxx/);
});

test('coordinate bounds that overflow to Infinity (309+ digits) are 400', async () => {
  for (const value of ['9'.repeat(309), `-${'9'.repeat(400)}`, `${'1'.repeat(320)}.5`]) {
    for (const name of ['latitude_gte', 'longitude_lte']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v0/chapters/?${name}=${value}` });
      assert.equal(res.statusCode, 400, `${name}=${value.slice(0, 10)}…`);
      assert.deepEqual(res.json().errors, [{ loc: ['query', name], msg: 'must be a decimal number' }]);
    }
  }
  assert.equal(
    (await t.app.inject({ method: 'GET', url: `/api/v0/events/?latitude_gte=${'9'.repeat(309)}` })).statusCode,
    400,
  );
  assert.equal(
    (await t.app.inject({ method: 'GET', url: `/api/v0/chapters/?latitude_gte=0.${'0'.repeat(400)}1` })).statusCode,
    200,
  );
});

test('object prototype names are unknown parameters like any other (ignored)', async () => {
  const expected = await t.app.inject({ method: 'GET', url: '/api/v0/chapters/?unknown_name=%00' });
  assert.equal(expected.statusCode, 200);
  for (const name of ['constructor', '__proto__', 'hasOwnProperty', 'toString', 'valueOf', 'prototype']) {
    const res = await t.app.inject({ method: 'GET', url: `/api/v0/chapters/?${name}=%00` });
    assert.equal(res.statusCode, 200, name);
    assert.equal(res.body, expected.body, name);
  }
});

test('CORS: a real preflight for /api/v0/ is answered; the answers carry the origin and expose our headers', async () => {
  const base = `http://127.0.0.1:${port}`;
  const preflight = await fetch(`${base}/api/v0/chapters/?limit=1`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://elsewhere.example',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'x-api-key,if-none-match',
    },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
  assert.match(preflight.headers.get('access-control-allow-headers')!, /X-API-Key/i);
  assert.match(preflight.headers.get('access-control-allow-headers')!, /If-None-Match/i);
  assert.match(preflight.headers.get('access-control-allow-headers')!, /If-Range/i);
  assert.match(preflight.headers.get('access-control-allow-methods')!, /GET/);
  assert.ok(Number(preflight.headers.get('access-control-max-age')) > 0);
  assert.equal(preflight.headers.get('access-control-allow-credentials'), null);

  const res = await fetch(`${base}/api/v0/chapters/?limit=1`, { headers: { origin: 'https://elsewhere.example' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  for (const name of ['Link', 'ETag', 'Content-Range', 'RateLimit-Remaining', 'Retry-After'])
    assert.match(res.headers.get('access-control-expose-headers')!, new RegExp(name));
  assert.equal(res.headers.get('access-control-allow-credentials'), null);
  // Errors too, so that a page can read why it was refused.
  const refused = await fetch(`${base}/api/v0/chapters/`, {
    headers: { origin: 'https://elsewhere.example', 'x-api-key': 'wrong' },
  });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('access-control-allow-origin'), '*');
});

test('the preflight route does not turn unknown API paths into 405', async () => {
  for (const [method, url] of [
    ['GET', '/api/v0/unknown'],
    ['GET', '/api/v0/chapters/a/b/c'],
    ['POST', '/api/v0/nothing'],
  ] as const) {
    const res = await t.app.inject({ method, url });
    assert.equal(res.statusCode, 404, `${method} ${url}`);
    assert.deepEqual(res.json(), { message: 'Not found' });
  }
  const wrongMethod = await t.app.inject({ method: 'DELETE', url: '/api/v0/chapters/' });
  assert.equal(wrongMethod.statusCode, 405);
  assert.equal(wrongMethod.headers.allow, 'GET, HEAD, OPTIONS');
});

test('CORS: the signed-in routes stay same-origin', async () => {
  const origin = { origin: 'https://elsewhere.example' };
  const graphqlPreflight = await t.app.inject({
    method: 'OPTIONS',
    url: '/graphql/',
    headers: { ...origin, 'access-control-request-method': 'POST' },
  });
  assert.notEqual(graphqlPreflight.statusCode, 204);
  for (const [method, url] of [
    ['OPTIONS', '/graphql/'],
    ['POST', '/graphql/'],
    ['GET', '/auth/github/login'],
    ['GET', '/settings/api-keys'],
    ['GET', '/csrf/'],
  ] as const) {
    const res = await t.app.inject({
      method,
      url,
      headers: { ...origin, 'content-type': 'application/json' },
      payload: method === 'POST' ? '{"query":"{ me { login } }"}' : undefined,
    });
    assert.equal(res.headers['access-control-allow-origin'], undefined, `${method} ${url}`);
  }
});

test('CORS_ORIGINS: only the listed origins, with Vary: Origin', async () => {
  const ok = await listed.app.inject({
    method: 'GET',
    url: '/api/v0/chapters/?limit=1',
    headers: { origin: 'https://one.example' },
  });
  assert.equal(ok.headers['access-control-allow-origin'], 'https://one.example');
  assert.match(String(ok.headers.vary), /Origin/);
  const other = await listed.app.inject({
    method: 'OPTIONS',
    url: '/api/v0/chapters/',
    headers: { origin: 'https://two.example', 'access-control-request-method': 'GET' },
  });
  assert.equal(other.headers['access-control-allow-origin'], undefined);
  assert.equal(other.headers['access-control-allow-headers'], undefined);
});

test('security headers on every response, the page fields on HTML only; HSTS in production only', async () => {
  const requests = [
    ['GET', '/api/v0/chapters/', false],
    ['GET', '/api/v0/', false],
    ['GET', '/status/', false],
    ['GET', '/metrics', false],
    ['POST', '/graphql/', false],
    ['GET', '/nowhere', false],
    ['DELETE', '/api/v0/chapters/', false],
    ['GET', '/api/v0/chapters/?page=x', false],
    ['GET', '/', true],
    ['GET', '/map', true],
    ['GET', '/api/v0/docs/', true],
  ] as const;
  for (const [method, url, page] of requests) {
    for (const [app, hsts] of [
      [t, false],
      [production, true],
    ] as const) {
      const res = await app.app.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'POST' ? '{"query":"{ me { login } }"}' : undefined,
      });
      const what = `${method} ${url}`;
      assert.equal(res.headers['x-content-type-options'], 'nosniff', what);
      assert.equal(String(res.headers['content-type']).startsWith('text/html'), page, what);
      assert.equal(res.headers['referrer-policy'] !== undefined, page, what);
      assert.equal(res.headers['x-frame-options'], page ? 'DENY' : undefined, what);
      assert.equal(res.headers['strict-transport-security'] !== undefined, hsts, what);
    }
  }
});

test("Link addresses are absolute: PUBLIC_URL, else the request's own host, never another request's from the cache", async () => {
  const url = '/api/v0/chapters/?limit=1';
  const one = await t.app.inject({ method: 'GET', url, headers: { host: 'one.example' } });
  const two = await t.app.inject({ method: 'GET', url, headers: { host: 'two.example:8080' } });
  assert.equal(one.statusCode, 200);
  assert.equal(two.headers['x-cache'], 'HIT', 'the second answer comes from the cache');
  assert.match(String(one.headers.link), /^<http:\/\/one\.example\/api\/v0\/chapters\/\?limit=1&page=1>; rel="first"/);
  assert.match(
    String(two.headers.link),
    /^<http:\/\/two\.example:8080\/api\/v0\/chapters\/\?limit=1&page=1>; rel="first"/,
  );
  assert.doesNotMatch(String(two.headers.link), /one\.example/);
  // A Host header that is no host: the addresses start at the path, nothing of it is written into the header.
  const odd = await t.app.inject({ method: 'GET', url, headers: { host: 'x>; rel="evil"' } });
  assert.match(String(odd.headers.link), /^<\/api\/v0\/chapters\/\?limit=1&page=1>; rel="first"/);
  assert.doesNotMatch(String(odd.headers.link), /evil/);
  // PUBLIC_URL, when set, whatever the request's host.
  const published = await buildTestApp({
    env: { PUBLIC_URL: 'https://data.example.org/' },
    sharedDatabase: t.database,
  });
  try {
    for (const round of ['cold', 'warm']) {
      const res = await published.app.inject({ method: 'GET', url, headers: { host: 'internal:3000' } });
      assert.match(
        String(res.headers.link),
        /^<https:\/\/data\.example\.org\/api\/v0\/chapters\/\?limit=1&page=1>; rel="first"/,
        round,
      );
    }
  } finally {
    await published.close();
  }
});
