import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day, repository } from '../../../../test/factories.ts';
import { label } from '../../../../test/factories-github.ts';
import { assertInvalid, assertPagination } from '../../../../test/lists.ts';
import { assertHead, assertNotFound } from '../../../../test/resources.ts';
import { useListApp } from '../lists.test-helpers.ts';

type Tracked = { id: number; name: string; color: string; nest_created_at: string; nest_updated_at: string };

const LIST = '/api/v0/labels/';
const ORDERINGS = {
  key: 'name',
  byDefault: '-nest_created_at',
  fields: ['nest_created_at', 'nest_updated_at'],
} as const;
const list = useListApp<Tracked>(LIST, ORDERINGS, async (db, rows) => {
  const nest = await repository(db, { owner_login: 'OWASP', name: 'Nest' });
  const other = await repository(db, { owner_login: 'OWASP', name: 'Other' });
  // Equal stored-at times on purpose, so the id tie-breaker decides.
  const specs = [
    [nest, 'bug', 'b60205', 3, 5],
    [nest, 'docs', '0075ca', 1, 5],
    [other, 'bug-other', 'b60205', 3, 6],
    [nest, 'good first issue', '7057ff', 2, 5],
    [other, 'wontfix', 'ffffff', 1, 7],
    [other, 'question', 'd876e3', 3, 6],
  ] as const;
  for (const [repository_id, name, color, created, updated] of specs) {
    const values = { name, color, nest_created_at: day(created), nest_updated_at: day(updated) };
    rows.push({ id: await label(db, { repository_id, description: `About ${name}`, ...values }), ...values });
  }
});
const { api, get, keys: names, ordered } = list;

const ALL = ['bug', 'docs', 'bug-other', 'good first issue', 'wontfix', 'question'];

test('orderings: default -nest_created_at, each value both ways, unknown → 400', async () => {
  await list.assertOrderingContract();
  assertInvalid(await get(`${LIST}?ordering=created_at`), 'query', 'ordering');
});

test('an item has exactly name, description, color', async () => {
  const item = (await get(`${LIST}?ordering=nest_created_at,nest_updated_at&limit=1`)).json().items[0];
  assert.deepEqual(item, { name: 'docs', description: 'About docs', color: '0075ca' });
});

test('color filter: six hex digits, any case; empty ignored; anything else → 400', async () => {
  assert.deepEqual(await names(`${LIST}?color=b60205`), ordered(['bug', 'bug-other']));
  assert.deepEqual(await names(`${LIST}?color=B60205`), ordered(['bug', 'bug-other']));
  assert.deepEqual(await names(`${LIST}?color=FfFfFf`), ['wontfix']);
  assert.deepEqual(await names(`${LIST}?color=000000`), []);
  assert.deepEqual(await names(`${LIST}?color=`), ordered(ALL));
  for (const value of ['red', 'b6020', 'b602051', '%23b60205', 'gggggg', 'b6-205', 'fff']) {
    assertInvalid(await get(`${LIST}?color=${value}`), 'query', 'color', value);
  }
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(ALL), { key: 'name', limit: 2 });
});

test('there is no label detail; HEAD on the list', async () => {
  await assertNotFound(get, '/api/v0/labels/', ['bug'], 'Not found');
  await assertHead(api, LIST);
});
