import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../test/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

test('GET /status/ answers 200 ok with the database kind', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/status/' });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^application\/json/);
  const body = res.json();
  assert.equal(body.status, 'ok');
  assert.equal(body.database.ok, true);
  assert.equal(body.database.kind, t.database.kind);
  assert.equal(typeof body.version, 'string');
});

test('/status without the slash and HEAD answer the same', async () => {
  assert.equal((await t.app.inject({ method: 'GET', url: '/status' })).statusCode, 200);
  const head = await t.app.inject({ method: 'HEAD', url: '/status/' });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
});

test('other methods on a known path get 405 with Allow', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
    const res = await t.app.inject({ method, url: '/status/' });
    assert.equal(res.statusCode, 405, method);
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.deepEqual(res.json(), { message: 'Method not allowed' });
  }
});

test('an unknown path is a JSON 404', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/no/such/thing' });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: 'Not found' });
});

test('a database that stopped answering gives 503, not a crash', async () => {
  const other = await buildTestApp();
  try {
    await other.database.close();
    const res = await other.app.inject({ method: 'GET', url: '/status/' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().status, 'unavailable');
  } finally {
    await other.app.close();
    await other.database.drop().catch(() => {});
  }
});
