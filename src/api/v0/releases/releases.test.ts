import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day } from '../../../../test/factories.ts';
import { nestRepositories, release } from '../../../../test/factories-github.ts';
import { assertDateTime, assertInvalid, assertPagination } from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound } from '../../../../test/resources.ts';
import { useListApp } from '../lists.test-helpers.ts';

type Tracked = { id: number; name: string; tag_name: string; published_at: string | null; created_at: string };

const LIST = '/api/v0/releases/';
const ORDERINGS = {
  key: 'name',
  byDefault: '-published_at,-created_at',
  fields: ['created_at', 'published_at'],
} as const;
const list = useListApp<Tracked>(LIST, ORDERINGS, async (db, rows) => {
  const { nest, other, octoNest } = await nestRepositories(db);
  // Equal and null dates on purpose; the same tag in two repositories; tags differing only in case.
  const specs = [
    [nest, 'v1.0.0', 'n1', 5, 3],
    [nest, 'v1.1.0', 'n2', null, 4],
    [other, 'release/2.0', 'n3', 5, 2],
    [octoNest, 'v1.0.0', 'n4', 6, 4],
    [nest, 'V1.0.0', 'n5', 5, 3],
    [other, 'v2.0.0-rc.1', 'n6', null, 4],
  ] as const;
  for (const [repository_id, tag_name, name, published, created] of specs) {
    const values = {
      name,
      tag_name,
      published_at: published === null ? null : day(published),
      created_at: day(created),
    };
    rows.push({ id: await release(db, { repository_id, description: `Notes of ${name}`, ...values }), ...values });
  }
});
const { api, get, keys: names, ordered } = list;

const ALL = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'];

test('orderings: default -published_at,-created_at (unpublished first), each value both ways, unknown → 400', async () => {
  await list.assertOrderingContract();
  assert.deepEqual((await names(LIST)).slice(0, 2), ['n6', 'n2']);
});

test('an item has exactly name, tag_name, published_at, created_at; published_at null when unpublished', async () => {
  const items = (await get(LIST)).json().items;
  assert.deepEqual(Object.keys(items[0]).sort(), ['created_at', 'name', 'published_at', 'tag_name']);
  assert.equal(items[0].published_at, null);
  assertDateTime(items.at(-1).published_at);
  assertDateTime(items[0].created_at);
});

test('tag_name filter is exact and case-sensitive; empty ignored', async () => {
  assert.deepEqual(await names(`${LIST}?tag_name=v1.0.0`), ordered(['n1', 'n4']));
  assert.deepEqual(await names(`${LIST}?tag_name=V1.0.0`), ['n5']);
  assert.deepEqual(await names(`${LIST}?tag_name=release%2F2.0`), ['n3']);
  assert.deepEqual(await names(`${LIST}?tag_name=v1`), []);
  assert.deepEqual(await names(`${LIST}?tag_name=`), ordered(ALL));
  assertInvalid(await get(`${LIST}?tag_name=${'v'.repeat(201)}`), 'query', 'tag_name');
});

test('organization and repository filters: case-insensitive, combined, empty ignored', async () => {
  assert.deepEqual(await names(`${LIST}?organization=owasp`), ordered(['n1', 'n2', 'n3', 'n5', 'n6']));
  assert.deepEqual(await names(`${LIST}?repository=NEST`), ordered(['n1', 'n2', 'n4', 'n5']));
  assert.deepEqual(await names(`${LIST}?organization=Octo-Org&repository=nest&tag_name=v1.0.0`), ['n4']);
  assert.deepEqual(await names(`${LIST}?organization=&repository=`), ordered(ALL));
  assert.deepEqual(await names(`${LIST}?organization=octo-org&repository=other`), []);
  assertInvalid(await get(`${LIST}?repository=${'x'.repeat(201)}`), 'query', 'repository');
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(ALL), { key: 'name', limit: 2 });
});

test('detail: every Release field; names case-insensitive, the tag exact; dots and %2F in tags', async () => {
  await assertDetail(get, '/api/v0/releases/', ['owasp/NEST/v1.0.0'], {
    name: 'n1',
    tag_name: 'v1.0.0',
    description: 'Notes of n1',
    published_at: new Date(day(5)).toISOString(),
    created_at: new Date(day(3)).toISOString(),
  });
  for (const [url, name] of [
    ['OWASP/Nest/V1.0.0', 'n5'],
    ['octo-org/Nest/v1.0.0', 'n4'],
    ['OWASP/Other/release%2F2.0', 'n3'],
    ['OWASP/Other/v2.0.0-rc.1', 'n6'],
  ]) {
    const detail = await get(`/api/v0/releases/${url}`);
    assert.equal(detail.statusCode, 200, url);
    assert.equal(detail.json().name, name, url);
  }
  assert.equal((await get('/api/v0/releases/OWASP/Nest/v1.1.0')).json().published_at, null);
});

test('detail: unknown → 404 "Release not found"; a raw slash in the tag is not a route', async () => {
  await assertNotFound(
    get,
    '/api/v0/releases/',
    ['OWASP/Nest/v9', 'OWASP/Nest/V1.1.0', 'OWASP/Other/v1.0.0', 'nobody/Nest/v1.0.0'],
    'Release not found',
  );
  await assertNotFound(get, '/api/v0/releases/', ['OWASP/Other/release/2.0'], 'Not found');
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/releases/OWASP/Nest/v1.0.0');
});
