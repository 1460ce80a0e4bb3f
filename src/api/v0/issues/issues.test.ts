import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day, issue } from '../../../../test/factories.ts';
import { assertDateTime, assertInvalid, assertPagination } from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound } from '../../../../test/resources.ts';
import { useTrackedApp } from '../tracked.test-helpers.ts';

const LIST = '/api/v0/issues/';

const { api, titles, ordered } = useTrackedApp(
  LIST,
  (db) => (values) =>
    issue(db, { ...values, body: `Body of ${values.title}`, url: `https://github.com/x/${values.title}` }),
);

const { get, head } = api;

test('an item has exactly title, state, url, created_at, updated_at', async () => {
  const res = await get(LIST);
  const item = res.json().items[0];
  assert.deepEqual(Object.keys(item).sort(), ['created_at', 'state', 'title', 'updated_at', 'url']);
  assertDateTime(item.created_at);
  assertDateTime(item.updated_at);
});

test('organization and repository filters: case-insensitive, combined, empty ignored', async () => {
  const all = ordered(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  for (const value of ['OWASP', 'owasp', 'oWaSp']) {
    assert.deepEqual(await titles(`${LIST}?organization=${value}`), ordered(['a', 'b', 'c', 'e', 'f']), value);
  }
  assert.deepEqual(await titles(`${LIST}?repository=NEST`), ordered(['a', 'b', 'd', 'e', 'g']));
  assert.deepEqual(await titles(`${LIST}?organization=octo-org&repository=nest`), ordered(['d', 'g']));
  assert.deepEqual(await titles(`${LIST}?organization=owasp&repository=other&state=open`), ordered(['c', 'f']));
  assert.deepEqual(await titles(`${LIST}?organization=nobody`), []);
  assert.deepEqual(await titles(`${LIST}?organization=&repository=`), all);
  assertInvalid(await get(`${LIST}?organization=${'x'.repeat(201)}`), 'query', 'organization');
  assertInvalid(await get(`${LIST}?repository=${'x'.repeat(201)}`), 'query', 'repository');
});

test('state filter: open or closed, any case; empty ignored; anything else → 400', async () => {
  assert.deepEqual(await titles(`${LIST}?state=closed`), ordered(['b', 'd']));
  assert.deepEqual(await titles(`${LIST}?state=OPEN`), ordered(['a', 'c', 'e', 'f', 'g']));
  assert.deepEqual(await titles(`${LIST}?state=`), ordered(['a', 'b', 'c', 'd', 'e', 'f', 'g']));
  for (const value of ['merged', 'all', '1'])
    assertInvalid(await get(`${LIST}?state=${value}`), 'query', 'state', value);
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(['a', 'b', 'c', 'd', 'e', 'f', 'g']), { key: 'title', limit: 2 });
  assert.equal((await get(`${LIST}?state=closed&limit=1&page=3`)).json().total_pages, 2);
});

test('detail: found by organization, repository and number, any case of the names', async () => {
  for (const [url, title] of [
    ['/api/v0/issues/OWASP/Nest/1', 'a'],
    ['/api/v0/issues/owasp/NEST/1', 'a'],
    ['/api/v0/issues/octo-org/nest/1', 'd'],
    ['/api/v0/issues/Owasp/other/2', 'f'],
    ['/api/v0/issues/OWASP/Nest/01', 'a'],
  ] as const) {
    const res = await get(url);
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.json().title, title, url);
  }
  await assertDetail(get, '/api/v0/issues/', ['OWASP/Nest/2'], {
    title: 'b',
    state: 'closed',
    body: 'Body of b',
    url: 'https://github.com/x/b',
    created_at: new Date(day(1)).toISOString(),
    updated_at: new Date(day(5)).toISOString(),
  });
});

test('detail: unknown → 404 "Issue not found"; a non-integer number → 400', async () => {
  await assertNotFound(
    get,
    '/api/v0/issues/',
    ['OWASP/Nest/99', 'nobody/Nest/1', 'OWASP/missing/1', 'octo-org/Other/1'],
    'Issue not found',
  );
  for (const number of ['abc', '1.5', '1e2', '-1', '0x1', '%201', '1%20', '0', '99999999999']) {
    assertInvalid(await get(`/api/v0/issues/OWASP/Nest/${number}`), 'path', 'issue_id', number);
  }
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/issues/OWASP/Nest/1');
  assert.equal((await head('/api/v0/issues/OWASP/Nest/99')).statusCode, 404);
});
