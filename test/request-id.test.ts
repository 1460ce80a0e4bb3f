// X-Request-Id (issue 30): a plain id from the client is kept, anything else is replaced by a new one; the id is on
// every response (built, cached, error, 404, GraphQL, the preflight), in every log line of the request, and is the
// error id of a 500 body and of a GraphQL error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp, REDACTED_PATHS } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/index.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { freePort } from './process.ts';
import { chapter } from './factories.ts';
import { tickingTimers } from './fake-clock.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestApp;
let key: string;
before(async () => {
  t = await buildTestApp({
    env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' },
    captureLogs: true,
    timers: tickingTimers(),
  });
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
  // The writes moved the data version (each records its change): heard now, not at the app's next poll mid-test.
  await t.app.shared.watcher.refresh();
  const browser = await devSignIn(t, 'request-ids');
  key = (await graphql(t, browser, DOC.createApiKey, { name: 'ids', expiresAt: inDays(5) })).json().data.createApiKey
    .rawKey;
});
after(() => t.close());

const get = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });

test('a plain id is echoed; none, an odd or an overlong one is replaced by a new UUID', async () => {
  for (const id of ['abc', 'req-1.2_3', 'A'.repeat(128), 'a']) {
    const res = await get('/api/v0/chapters/london', { 'x-request-id': id });
    assert.equal(res.headers['x-request-id'], id);
  }
  const generated = new Set<string>();
  for (const id of [undefined, '', 'has space', 'new\\nline', 'ünïcode', 'A'.repeat(129), 'a,b', '<script>']) {
    const res = await get('/api/v0/chapters/london', id === undefined ? {} : { 'x-request-id': id });
    const echoed = res.headers['x-request-id'] as string;
    assert.match(echoed, UUID, JSON.stringify(id));
    generated.add(echoed);
  }
  assert.equal(generated.size, 8, 'a new id each time');
});

test('the id is on every kind of response: cached, 304, HEAD, 401, 404, 400, 405, GraphQL, pages, status', async () => {
  const first = await get('/api/v0/chapters/london');
  const answers = {
    cached: await get('/api/v0/chapters/london', { 'x-request-id': 'cached-1' }),
    notModified: await get('/api/v0/chapters/london', {
      'x-request-id': 'etag-1',
      'if-none-match': first.headers.etag as string,
    }),
    head: await t.app.inject({ method: 'HEAD', url: '/api/v0/chapters/london', headers: { 'x-request-id': 'head-1' } }),
    unauthorized: await t.app.inject({ url: '/api/v0/chapters/', headers: { 'x-request-id': 'anon-1' } }),
    notFound: await get('/nowhere', { 'x-request-id': 'missing-1' }),
    recordNotFound: await get('/api/v0/chapters/nowhere', { 'x-request-id': 'missing-2' }),
    invalid: await get('/api/v0/chapters/?page=0', { 'x-request-id': 'invalid-1' }),
    notAllowed: await t.app.inject({
      method: 'DELETE',
      url: '/api/v0/chapters/',
      headers: { 'x-request-id': 'del-1' },
    }),
    graphql: await t.app.inject({
      method: 'POST',
      url: '/graphql/',
      headers: { 'content-type': 'application/json', 'x-request-id': 'gql-1' },
      payload: { query: '{ me { login } }' },
    }),
    page: await t.app.inject({ url: '/settings/api-keys', headers: { 'x-request-id': 'page-1' } }),
    status: await t.app.inject({ url: '/status/', headers: { 'x-request-id': 'status-1' } }),
    badUrl: await t.app.inject({ url: '/api/v0/chapters/%E0%A4%A', headers: { 'x-request-id': 'bad-url-1' } }),
  };
  assert.equal(answers.cached.headers['x-cache'], 'HIT');
  assert.equal(answers.notModified.statusCode, 304);
  const expected = {
    cached: 'cached-1',
    notModified: 'etag-1',
    head: 'head-1',
    unauthorized: 'anon-1',
    notFound: 'missing-1',
    recordNotFound: 'missing-2',
    invalid: 'invalid-1',
    notAllowed: 'del-1',
    graphql: 'gql-1',
    page: 'page-1',
    status: 'status-1',
    badUrl: 'bad-url-1',
  };
  for (const [name, res] of Object.entries(answers))
    assert.equal(res.headers['x-request-id'], expected[name as keyof typeof expected], `${name} (${res.statusCode})`);
});

test('every log line of a request carries its id as reqId', async () => {
  await get('/api/v0/chapters/london', { 'x-request-id': 'logged-request-1' });
  const lines = t
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { reqId?: string; msg?: string });
  const own = lines.filter((line) => line.reqId === 'logged-request-1');
  assert.ok(
    own.some((line) => line.msg === 'incoming request'),
    'the request line',
  );
  assert.ok(
    own.some((line) => line.msg === 'request completed'),
    'the response line',
  );
});

test('a 500 body and a GraphQL error carry the request id as their error id', async () => {
  // The service on a PostgreSQL address where nothing listens (GraphQL's resolvers fail), with a route that fails as a
  // bug would.
  const database = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await freePort()}/gone` });
  const logs: string[] = [];
  const logger = pino(
    { level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    new Writable({ write: (chunk: Buffer, _encoding, done) => (logs.push(chunk.toString()), done()) }),
  );
  const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'info' }), database, logger });
  app.get('/test-only/bug', () => Promise.reject(new Error('a bug')));
  await app.ready();
  try {
    const failed = await app.inject({ url: '/test-only/bug', headers: { 'x-request-id': 'bug-1' } });
    assert.equal(failed.statusCode, 500);
    assert.deepEqual(failed.json(), { message: 'Internal server error', error_id: 'bug-1' });
    assert.equal(failed.headers['x-request-id'], 'bug-1');
    assert.ok(
      logs.some((line) => line.includes('"reqId":"bug-1"') && line.includes('a bug')),
      'the cause is logged under the id',
    );
    const generated = await app.inject({ url: '/test-only/bug' });
    assert.equal(generated.json().error_id, generated.headers['x-request-id']);

    const res = await app.inject({
      method: 'POST',
      url: '/graphql/',
      headers: {
        'content-type': 'application/json',
        'x-request-id': 'gql-failure-1',
        cookie: `cds_session=${'a'.repeat(43)}; csrftoken=t0k3n`,
        'x-csrftoken': 't0k3n',
      },
      payload: { query: DOC.getApiKeys },
    });
    const error = res.json().errors[0] as { message: string; extensions: { errorId: string } };
    assert.equal(error.extensions.errorId, 'gql-failure-1');
    assert.match(error.message, /\(error id gql-failure-1\)$/);
    assert.equal(res.headers['x-request-id'], 'gql-failure-1');
    assert.ok(logs.some((line) => line.includes('"reqId":"gql-failure-1"') && line.includes('errorId')));
  } finally {
    await app.close();
    await database.close();
  }
});
