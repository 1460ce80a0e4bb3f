import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day, member } from '../../../../test/factories.ts';
import {
  assertDateTime,
  assertDefaultOrdering,
  assertInvalid,
  assertOrderings,
  assertPagination,
  assertUnknownOrdering,
  bothWays,
  keysInOrder,
  keysOf,
} from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound, useTestApp } from '../../../../test/resources.ts';

type Tracked = { id: number; login: string; name: string; created_at: string; updated_at: string };
/** The published members: those with GitHub's dates (their profile is known). */
const rows: Tracked[] = [];

const api = useTestApp(async (db) => {
  // Equal dates and names on purpose: the id breaks ties. Members without dates (Carol, erin, grace:
  // profile not fetched yet) are not published at all.
  const specs = [
    ['alice', 'Zoe', 'OWASP', 'London', 3, 5],
    ['bob', 'Yan', 'owasp', 'Lisbon', 1, 5],
    ['Carol', 'Carol', 'Acme', 'london', null, null],
    ['dave', 'Yan', '', '', 3, 6],
    ['erin', 'Erin', 'OWASP Foundation', 'London, UK', 2, null],
    ['frank', 'Abe', 'Acme', 'Paris', 3, 6],
    ['grace', 'Grace', 'acme', 'PARIS', null, 7],
    ['henry', 'Max', 'acme', 'London, UK', 2, 4],
  ] as const;
  for (const [login, name, company, location, created, updated] of specs) {
    const dates = {
      created_at: created === null ? null : day(created),
      updated_at: updated === null ? null : day(updated),
    };
    const id = await member(db, {
      login,
      company,
      location,
      name,
      avatar_url: `https://avatars.example/${login}`,
      url: `https://github.com/${login}`,
      ...dates,
    });
    if (created !== null && updated !== null)
      rows.push({ id: Number(id), login, name, created_at: day(created), updated_at: day(updated) });
  }
});

const { get } = api;
const LIST = '/api/v0/members/';
const DEFAULT = '-created_at';
const logins = (url: string) => keysOf(get, url, 'login');
const ordered = (which: string[]) => keysInOrder(rows, DEFAULT, 'login').filter((x) => which.includes(x));
const ALL = ['alice', 'bob', 'dave', 'frank', 'henry'];
const FIELDS = ['created_at', 'updated_at', 'login', 'name'];

test('orderings: default -created_at; created_at, updated_at, login, name each both ways and mixed; unknown → 400', async () => {
  await assertDefaultOrdering(get, LIST, rows, DEFAULT, 'login');
  await assertOrderings(
    get,
    LIST,
    rows,
    [...bothWays(FIELDS), 'name,-login', '-name,login', 'name,created_at', '-updated_at,name'],
    'login',
  );
  assert.deepEqual(
    await logins(`${LIST}?ordering=name`),
    ['frank', 'henry', 'bob', 'dave', 'alice'],
    'by display name, the id breaking the tie',
  );
  assert.deepEqual(await logins(`${LIST}?ordering=-login`), ['henry', 'frank', 'dave', 'bob', 'alice']);
  await assertUnknownOrdering(get, LIST, bothWays(FIELDS));
  for (const bad of ['company', 'name,name', '-avatar_url'])
    assertInvalid(await get(`${LIST}?ordering=${bad}`), 'query', 'ordering', bad);
});

test('an item has exactly login, name, avatar_url, url, created_at, updated_at; dates are never null', async () => {
  const items = (await get(LIST)).json().items;
  assert.deepEqual(
    items.map((item: { login: string }) => item.login),
    ordered(ALL),
  );
  for (const item of items) {
    assert.deepEqual(Object.keys(item), ['login', 'name', 'avatar_url', 'url', 'created_at', 'updated_at']);
    assertDateTime(item.created_at);
    assertDateTime(item.updated_at);
  }
  assert.deepEqual(
    items.find((item: { login: string }) => item.login === 'henry'),
    {
      login: 'henry',
      name: 'Max',
      avatar_url: 'https://avatars.example/henry',
      url: 'https://github.com/henry',
      created_at: day(2),
      updated_at: day(4),
    },
  );
});

test('members whose GitHub profile is not known yet (no dates) are not published: not listed, detail 404', async () => {
  const listed = await logins(`${LIST}?limit=100`);
  for (const login of ['Carol', 'erin', 'grace']) {
    assert.ok(!listed.includes(login), login);
    assert.equal((await get(`/api/v0/members/${login}`)).statusCode, 404, login);
  }
  assert.equal((await get(LIST)).json().count, ALL.length);
});

test('company and location filters: case-insensitive equality; empty ignored', async () => {
  assert.deepEqual(await logins(`${LIST}?company=owasp`), ordered(['alice', 'bob']));
  assert.deepEqual(await logins(`${LIST}?company=ACME`), ordered(['frank', 'henry']));
  assert.deepEqual(await logins(`${LIST}?location=LONDON`), ordered(['alice']));
  assert.deepEqual(await logins(`${LIST}?location=london%2C%20uk`), ['henry']);
  assert.deepEqual(await logins(`${LIST}?company=acme&location=paris`), ordered(['frank']));
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
    .set({
      bio: 'Builds things',
      url: 'https://github.com/alice',
      title: 'Engineer',
      twitter_username: 'alice_t',
      followers_count: 12,
      following_count: 3,
      public_repositories_count: 7,
    })
    .where('login', '=', 'alice')
    .execute();
  await assertDetail(get, '/api/v0/members/', ['alice', 'ALICE', 'Alice'], {
    login: 'alice',
    name: 'Zoe',
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
  await assertNotFound(get, '/api/v0/members/', ['nobody', 'alic', 'alice%20', 'carol', 'Grace'], 'Member not found');
});

test('no e-mail anywhere in member responses', async () => {
  for (const url of [`${LIST}`, '/api/v0/members/alice', '/api/v0/members/dave']) {
    const body = (await get(url)).body;
    assert.doesNotMatch(body, /mail|@/i, url);
  }
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/members/alice');
});
