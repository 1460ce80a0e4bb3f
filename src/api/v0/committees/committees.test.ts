import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import type { CommitteeTable } from '../../../db/schema.ts';
import { committee } from '../../../../test/factories-community.ts';
import {
  assertDefaultOrdering,
  assertOrderings,
  assertPagination,
  assertUnknownOrdering,
  bothWays,
  keysInOrder,
} from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound, useTestApp } from '../../../../test/resources.ts';

const PATH = '/api/v0/committees/';
const ALLOWED = bothWays(['created_at', 'updated_at']);

let active: Selectable<CommitteeTable>[];
const api = useTestApp(async (db) => {
  const at = (d: number) => new Date(Date.UTC(2022, 0, d)).toISOString();
  // Equal created_at (and equal updated_at) values, so the id tie-breaker decides; keys run against
  // the ids so that no other column could pass for the tie-breaker.
  active = [
    await committee(db, {
      key: 'Outreach',
      name: 'Outreach Committee',
      description: 'Reaches out.',
      created_at: at(5),
      updated_at: at(9),
    }),
    await committee(db, { key: 'zeta', created_at: at(3), updated_at: at(9) }),
    await committee(db, { key: 'yodel', created_at: at(5), updated_at: at(1) }),
    await committee(db, { key: 'xenon', created_at: at(1), updated_at: at(7) }),
    await committee(db, { key: 'whale', created_at: at(5), updated_at: at(9) }),
    await committee(db, { key: 'violet', created_at: at(8), updated_at: at(2) }),
    await committee(db, { key: 'umber', created_at: at(2), updated_at: at(7) }),
  ];
  await committee(db, { key: 'dormant', is_active: false, created_at: at(30) });
});

const { get } = api;

test('the list shows active committees only, by -created_at by default, with the list item fields', async () => {
  await assertDefaultOrdering(get, PATH, active, '-created_at');
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
  await assertPagination(get, PATH, keysInOrder(active, '-created_at', 'key'));
});

test('detail: the key with or without the prefix, any case; the detail fields', async () => {
  await assertDetail(
    get,
    PATH,
    ['Outreach', 'outreach', 'OUTREACH', 'www-committee-outreach', 'WWW-Committee-Outreach'],
    {
      key: 'Outreach',
      name: 'Outreach Committee',
      description: 'Reaches out.',
      created_at: active[0]!.created_at.toISOString(),
      updated_at: active[0]!.updated_at.toISOString(),
    },
  );
});

test('detail: missing and inactive committees are 404', async () => {
  await assertNotFound(
    get,
    PATH,
    ['dormant', 'www-committee-dormant', 'nothing', 'www-committee-'],
    'Committee not found',
  );
});

test('HEAD answers the list and the detail with 200 and no body', async () => {
  await assertHead(api, PATH, '/api/v0/committees/outreach');
});
