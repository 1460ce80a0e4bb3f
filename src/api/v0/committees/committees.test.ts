import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import type { CommitteeTable } from '../../../db/schema.ts';
import {
  assertOrderings,
  assertPagination,
  assertUnknownOrdering,
  committee,
  expectedOrder,
} from '../../../../test/factories-community.ts';

const PATH = '/api/v0/committees/';
const ALLOWED = ['created_at', '-created_at', 'updated_at', '-updated_at'];

let t: TestApp;
let active: Selectable<CommitteeTable>[];
before(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  const at = (d: number) => new Date(Date.UTC(2022, 0, d)).toISOString();
  // Equal created_at (and equal updated_at) values, so the id tie-breaker decides; keys run against
  // the ids so that no other column could pass for the tie-breaker.
  active = [
    await committee(db, { key: 'Outreach', name: 'Outreach Committee', description: 'Reaches out.', created_at: at(5), updated_at: at(9) }),
    await committee(db, { key: 'zeta', created_at: at(3), updated_at: at(9) }),
    await committee(db, { key: 'yodel', created_at: at(5), updated_at: at(1) }),
    await committee(db, { key: 'xenon', created_at: at(1), updated_at: at(7) }),
    await committee(db, { key: 'whale', created_at: at(5), updated_at: at(9) }),
    await committee(db, { key: 'violet', created_at: at(8), updated_at: at(2) }),
    await committee(db, { key: 'umber', created_at: at(2), updated_at: at(7) }),
  ];
  await committee(db, { key: 'dormant', is_active: false, created_at: at(30) });
});
after(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url });
const keys = (res: { json(): { items: { key: string }[] } }) => res.json().items.map((i) => i.key);

test('the list shows active committees only, by -created_at by default, with the list item fields', async () => {
  for (const url of [PATH, '/api/v0/committees', `${PATH}?ordering=`]) {
    const res = await get(url);
    assert.equal(res.statusCode, 200, url);
    assert.deepEqual(keys(res), expectedOrder(active, '-created_at').map((c) => c.key), url);
    assert.equal(res.json().count, active.length);
  }
  const item = (await get(PATH)).json().items.find((i: { key: string }) => i.key === 'Outreach');
  assert.deepEqual(item, {
    key: 'Outreach',
    name: 'Outreach Committee',
    created_at: active[0]!.created_at.toISOString(),
    updated_at: active[0]!.updated_at.toISOString(),
  });
});

test('every ordering, ascending and descending, several comma-separated; id breaks ties', async () => {
  await assertOrderings(get, PATH, active, [...ALLOWED, 'updated_at,-created_at', '-updated_at,created_at']);
});

test('an unknown ordering is 400 naming the allowed values', async () => {
  await assertUnknownOrdering(get, PATH, ALLOWED);
});

test('pagination: pages, past the end, limit and page_size bounds, Link header', async () => {
  await assertPagination(get, PATH, expectedOrder(active, '-created_at').map((c) => c.key));
});

test('detail: the key with or without the prefix, any case; the detail fields', async () => {
  for (const id of ['Outreach', 'outreach', 'OUTREACH', 'www-committee-outreach', 'WWW-Committee-Outreach']) {
    const res = await get(`/api/v0/committees/${id}`);
    assert.equal(res.statusCode, 200, id);
    assert.deepEqual(res.json(), {
      key: 'Outreach',
      name: 'Outreach Committee',
      description: 'Reaches out.',
      created_at: active[0]!.created_at.toISOString(),
      updated_at: active[0]!.updated_at.toISOString(),
    });
  }
});

test('detail: missing and inactive committees are 404', async () => {
  for (const id of ['dormant', 'www-committee-dormant', 'nothing', 'www-committee-']) {
    const res = await get(`/api/v0/committees/${id}`);
    assert.equal(res.statusCode, 404, id);
    assert.deepEqual(res.json(), { message: 'Committee not found' });
  }
});

test('HEAD answers the list and the detail with 200 and no body', async () => {
  for (const url of [PATH, '/api/v0/committees/outreach']) {
    const res = await t.app.inject({ method: 'HEAD', url });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.body, '');
  }
});
