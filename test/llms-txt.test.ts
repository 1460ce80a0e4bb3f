// GET /llms.txt (issue 27): the guide for agents, public whatever REST_AUTH says, its addresses those of this service.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp({ env: { REST_AUTH: 'required', RATE_LIMIT_PER_SECOND: '7' } });
});
after(() => t.close());

const get = (headers: Record<string, string> = {}, app = t) =>
  app.app.inject({ method: 'GET', url: '/llms.txt', headers });

test('public plain text: the data, keys, the MCP endpoint, and how to read lists without wasting requests', async () => {
  const res = await get({ host: 'data.example.org' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
  const text = res.body;
  assert.match(text, /^# OWASP community data\n\n> /);
  for (const expected of [
    'http://data.example.org/api/v0/',
    'http://data.example.org/api/v0/openapi.json',
    'http://data.example.org/mcp',
    'http://data.example.org/settings/api-keys',
    '`X-API-Key`',
    '"type": "http"',
    'cursor',
    '`fields=key,name`',
    '`near=LAT,LON`',
    '`group_by=FIELD`',
    'More than 7 requests a second',
    '`Retry-After`',
    '- [chapters](http://data.example.org/api/v0/chapters/)',
  ])
    assert.ok(text.includes(expected), `llms.txt lacks ${expected}`);
  assert.match(text, /needs a personal key/);
  assert.equal((await t.app.inject({ method: 'HEAD', url: '/llms.txt' })).statusCode, 200);
});

test('PUBLIC_URL, when set, is the base; a Host that is no host name is not echoed', async () => {
  const configured = await buildTestApp({
    env: { PUBLIC_URL: 'https://cds.example.net/', REST_AUTH: 'optional' },
    sharedDatabase: t.database,
  });
  try {
    const text = (await get({ host: 'other.example' }, configured)).body;
    assert.ok(text.includes('https://cds.example.net/mcp'));
    assert.ok(!text.includes('other.example'));
    assert.match(text, /also answers without a key/);
  } finally {
    await configured.close();
  }
  const odd = (await get({ host: 'evil"><script>' })).body;
  assert.ok(!odd.includes('script'));
  assert.ok(odd.includes('- REST API: /api/v0/'));
});
