// /livez (the process answers) and /readyz (the database and, when configured, Redis answer).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../test/app.ts';
import { freePort } from '../../test/process.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

test('/livez answers 200 ok, HEAD too; other methods 405', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/livez' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { status: 'ok' });
  assert.equal((await t.app.inject({ method: 'HEAD', url: '/livez' })).statusCode, 200);
  assert.equal((await t.app.inject({ method: 'POST', url: '/readyz', payload: {} })).statusCode, 405);
});

test('/readyz answers 200 ready with the database and, when configured, Redis', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.status, 'ready');
  assert.equal(body.database.ok, true);
  assert.equal(typeof body.database.latency_ms, 'number');
  if (t.config.redisUrl) assert.equal(body.redis.ok, true);
  else assert.equal('redis' in body, false, 'no redis entry without REDIS_URL');
});

test('Redis unreachable: /readyz stays 200 naming it, and /livez, /status/ and the API still answer', async () => {
  const closedPort = await freePort();
  const other = await buildTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${closedPort}` } });
  try {
    const res = await other.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      status: 'ready',
      database: { ok: true, latency_ms: res.json().database.latency_ms },
      redis: { ok: false },
    });
    assert.equal((await other.app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
    assert.equal(
      (await other.app.inject({ method: 'GET', url: '/status/' })).statusCode,
      200,
      '/status/ keeps its contract: the database',
    );
    assert.equal(
      (await other.app.inject({ method: 'GET', url: '/api/v0/chapters/' })).statusCode,
      200,
      'REST falls back to per-instance limits',
    );
  } finally {
    await other.close();
  }
});

test('Redis unreachable with READY_REQUIRES_REDIS=true: /readyz is 503 naming it', async () => {
  const closedPort = await freePort();
  const other = await buildTestApp({
    env: { REDIS_URL: `redis://127.0.0.1:${closedPort}`, READY_REQUIRES_REDIS: 'true' },
    sharedDatabase: t.database,
  });
  try {
    const res = await other.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['retry-after'], '5');
    assert.deepEqual(res.json(), {
      status: 'unavailable',
      database: { ok: true, latency_ms: res.json().database.latency_ms },
      redis: { ok: false },
    });
  } finally {
    await other.close();
  }
});

test('database unreachable: /readyz is 503, /livez still 200', async () => {
  const other = await buildTestApp();
  try {
    await other.database.close();
    const res = await other.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().status, 'unavailable');
    assert.deepEqual(res.json().database, { ok: false });
    assert.equal((await other.app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
  } finally {
    await other.app.close();
    await other.database.drop().catch(() => {});
  }
});
