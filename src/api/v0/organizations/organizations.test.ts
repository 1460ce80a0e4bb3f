import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day, organization } from '../../../../test/factories.ts';
import { assertDateTime, assertInvalid, assertOrderingContract, assertPagination, keysInOrder, keysOf } from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound, useTestApp } from '../../../../test/resources.ts';

type Tracked = { id: number; login: string; created_at: string | null; updated_at: string | null };
const rows: Tracked[] = [];

const api = useTestApp(async (db) => {
  // Equal and missing dates on purpose: nulls sort as PostgreSQL does, the id breaks ties.
  const specs = [
    ['OWASP', 'Worldwide', 3, 5],
    ['octo-org', 'San Francisco', 1, 5],
    ['Acme', 'worldwide', null, null],
    ['nest-lab', '', 3, 6],
    ['github', 'San Francisco, CA', 2, null],
    ['zeta', 'WORLDWIDE', 3, 6],
  ] as const;
  for (const [login, location, created, updated] of specs) {
    const dates = { created_at: created === null ? null : day(created), updated_at: updated === null ? null : day(updated) };
    // The stored e-mail must never be published.
    const id = await organization(db, { login, location, name: `${login} name`, company: `${login} Inc`, email: `contact@${login}.example`, ...dates });
    rows.push({ id: Number(id), login, ...dates });
  }
});

const { get } = api;
const LIST = '/api/v0/organizations/';
const DEFAULT = '-created_at';
const logins = (url: string) => keysOf(get, url, 'login');
const ordered = (which: string[]) => keysInOrder(rows, DEFAULT, 'login').filter((x) => which.includes(x));
const ALL = ['OWASP', 'octo-org', 'Acme', 'nest-lab', 'github', 'zeta'];

test('orderings: default -created_at, each value both ways (nulls as PostgreSQL sorts them), unknown → 400', async () => {
  await assertOrderingContract(get, LIST, rows, { key: 'login', fields: ['created_at', 'updated_at'], byDefault: DEFAULT });
  assert.equal((await logins(LIST))[0], 'Acme', 'organizations without dates come first descending');
});

test('an item has exactly login, name, created_at, updated_at; dates may be null', async () => {
  const items = (await get(LIST)).json().items;
  for (const item of items) assert.deepEqual(Object.keys(item).sort(), ['created_at', 'login', 'name', 'updated_at']);
  assert.deepEqual(items[0], { login: 'Acme', name: 'Acme name', created_at: null, updated_at: null });
  assertDateTime(items.at(-1).created_at);
});

test('location filter: case-insensitive equality; empty ignored', async () => {
  assert.deepEqual(await logins(`${LIST}?location=worldwide`), ordered(['OWASP', 'Acme', 'zeta']));
  assert.deepEqual(await logins(`${LIST}?location=SAN%20FRANCISCO`), ['octo-org']);
  assert.deepEqual(await logins(`${LIST}?location=San`), []);
  assert.deepEqual(await logins(`${LIST}?location=`), ordered(ALL));
  assertInvalid(await get(`${LIST}?location=${'x'.repeat(201)}`), 'query', 'location');
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(ALL), { key: 'login', limit: 2 });
});

test('detail: every Organization field, login in any case; 404 "Organization not found"', async () => {
  await assertDetail(get, '/api/v0/organizations/', ['OWASP', 'owasp', 'Owasp'], {
    login: 'OWASP',
    name: 'OWASP name',
    company: 'OWASP Inc',
    location: 'Worldwide',
    created_at: new Date(day(3)).toISOString(),
    updated_at: new Date(day(5)).toISOString(),
  });
  assert.deepEqual((await get('/api/v0/organizations/ACME')).json().created_at, null);
  await assertNotFound(get, '/api/v0/organizations/', ['nobody', 'owas'], 'Organization not found');
});

test('no e-mail anywhere in organization responses', async () => {
  for (const url of [LIST, '/api/v0/organizations/OWASP', '/api/v0/organizations/acme']) {
    assert.doesNotMatch((await get(url)).body, /mail|@|\.example/i, url);
  }
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/organizations/OWASP');
});
