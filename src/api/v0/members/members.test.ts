import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day, member } from '../../../../test/factories.ts';
import { assertDateTime, assertInvalid, assertOrderingContract, assertPagination, keysInOrder, keysOf } from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound, useTestApp } from '../../../../test/resources.ts';

type Tracked = { id: number; login: string; created_at: string | null; updated_at: string | null };
const rows: Tracked[] = [];

const api = useTestApp(async (db) => {
  // Equal and missing dates on purpose: nulls sort as PostgreSQL does, the id breaks ties.
  const specs = [
    ['alice', 'OWASP', 'London', 3, 5],
    ['bob', 'owasp', 'Lisbon', 1, 5],
    ['Carol', 'Acme', 'london', null, null],
    ['dave', '', '', 3, 6],
    ['erin', 'OWASP Foundation', 'London, UK', 2, null],
    ['frank', 'Acme', 'Paris', 3, 6],
    ['grace', 'acme', 'PARIS', null, 7],
  ] as const;
  for (const [login, company, location, created, updated] of specs) {
    const dates = { created_at: created === null ? null : day(created), updated_at: updated === null ? null : day(updated) };
    const id = await member(db, { login, company, location, name: login.toUpperCase(), avatar_url: `https://avatars.example/${login}`, ...dates });
    rows.push({ id: Number(id), login, ...dates });
  }
});

const { get } = api;
const LIST = '/api/v0/members/';
const DEFAULT = '-created_at';
const logins = (url: string) => keysOf(get, url, 'login');
const ordered = (which: string[]) => keysInOrder(rows, DEFAULT, 'login').filter((x) => which.includes(x));
const ALL = ['alice', 'bob', 'Carol', 'dave', 'erin', 'frank', 'grace'];

test('orderings: default -created_at, each value both ways (nulls as PostgreSQL sorts them), unknown → 400', async () => {
  await assertOrderingContract(get, LIST, rows, { key: 'login', fields: ['created_at', 'updated_at'], byDefault: DEFAULT });
  assert.deepEqual((await logins(LIST)).slice(0, 2), ['grace', 'Carol'], 'members without dates come first descending');
});

test('an item has exactly login, name, avatar_url, created_at, updated_at; dates may be null', async () => {
  const items = (await get(LIST)).json().items;
  for (const item of items) assert.deepEqual(Object.keys(item).sort(), ['avatar_url', 'created_at', 'login', 'name', 'updated_at']);
  assert.deepEqual(items[0], { login: 'grace', name: 'GRACE', avatar_url: 'https://avatars.example/grace', created_at: null, updated_at: new Date(day(7)).toISOString() });
  assertDateTime(items.at(-1).created_at);
});

test('company and location filters: case-insensitive equality; empty ignored', async () => {
  assert.deepEqual(await logins(`${LIST}?company=owasp`), ordered(['alice', 'bob']));
  assert.deepEqual(await logins(`${LIST}?company=ACME`), ordered(['Carol', 'frank', 'grace']));
  assert.deepEqual(await logins(`${LIST}?location=LONDON`), ordered(['alice', 'Carol']));
  assert.deepEqual(await logins(`${LIST}?location=london%2C%20uk`), ['erin']);
  assert.deepEqual(await logins(`${LIST}?company=acme&location=paris`), ordered(['frank', 'grace']));
  assert.deepEqual(await logins(`${LIST}?company=OWASP%20Found`), []);
  assert.deepEqual(await logins(`${LIST}?company=&location=`), ordered(ALL));
  assertInvalid(await get(`${LIST}?company=${'x'.repeat(201)}`), 'query', 'company');
  assertInvalid(await get(`${LIST}?location=${'x'.repeat(201)}`), 'query', 'location');
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(ALL), { key: 'login', limit: 2 });
});

test('detail: every Member field, login in any case; 404 "Member not found"', async () => {
  await api.t.database.db
    .updateTable('members')
    .set({ bio: 'Builds things', url: 'https://github.com/alice', title: 'Engineer', twitter_username: 'alice_t', followers_count: 12, following_count: 3, public_repositories_count: 7 })
    .where('login', '=', 'alice')
    .execute();
  await assertDetail(get, '/api/v0/members/', ['alice', 'ALICE', 'Alice'], {
    login: 'alice',
    name: 'ALICE',
    avatar_url: 'https://avatars.example/alice',
    url: 'https://github.com/alice',
    bio: 'Builds things',
    company: 'OWASP',
    location: 'London',
    title: 'Engineer',
    twitter_username: 'alice_t',
    followers_count: 12,
    following_count: 3,
    public_repositories_count: 7,
    created_at: new Date(day(3)).toISOString(),
    updated_at: new Date(day(5)).toISOString(),
  });
  const carol = (await get('/api/v0/members/carol')).json();
  assert.equal(carol.login, 'Carol');
  assert.equal(carol.created_at, null);
  assert.equal(carol.updated_at, null);
  await assertNotFound(get, '/api/v0/members/', ['nobody', 'alic', 'alice%20'], 'Member not found');
});

test('no e-mail anywhere in member responses', async () => {
  for (const url of [`${LIST}`, '/api/v0/members/alice', '/api/v0/members/Carol']) {
    const body = (await get(url)).body;
    assert.doesNotMatch(body, /mail|@/i, url);
  }
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/members/alice');
});
