import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day, organization } from '../../../../test/factories.ts';
import { assertDateTime, assertInvalid, assertPagination } from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound } from '../../../../test/resources.ts';
import { useListApp } from '../lists.test-helpers.ts';

type Tracked = { id: number; login: string; created_at: string; updated_at: string };
/** The published organizations: those with GitHub's dates (their profile is known). */

const LIST = '/api/v0/organizations/';
const ORDERINGS = { key: 'login', byDefault: '-created_at', fields: ['created_at', 'updated_at'] } as const;
const list = useListApp<Tracked>(LIST, ORDERINGS, async (db, rows) => {
  // Equal dates on purpose: the id breaks ties. Organizations without dates (Acme, github: profile
  // not fetched yet) are not published at all.
  const specs = [
    ['OWASP', 'Worldwide', 3, 5],
    ['octo-org', 'San Francisco', 1, 5],
    ['Acme', 'worldwide', null, null],
    ['nest-lab', '', 3, 6],
    ['github', 'San Francisco, CA', 2, null],
    ['zeta', 'WORLDWIDE', 3, 6],
    ['kappa', 'San Francisco, CA', 2, 2],
  ] as const;
  for (const [login, location, created, updated] of specs) {
    const dates = {
      created_at: created === null ? null : day(created),
      updated_at: updated === null ? null : day(updated),
    };
    // The stored e-mail must never be published.
    const id = await organization(db, {
      login,
      location,
      name: `${login} name`,
      company: `${login} Inc`,
      email: `contact@${login}.example`,
      ...dates,
    });
    if (created !== null && updated !== null)
      rows.push({ id: Number(id), login, created_at: day(created), updated_at: day(updated) });
  }
});
const { api, get, keys: logins, ordered } = list;

const ALL = ['OWASP', 'octo-org', 'nest-lab', 'zeta', 'kappa'];

test('orderings: default -created_at, each value both ways, unknown → 400', async () => {
  await list.assertOrderingContract();
});

test('an item has exactly login, name, created_at, updated_at; dates are never null', async () => {
  const items = (await get(LIST)).json().items;
  assert.deepEqual(
    items.map((item: { login: string }) => item.login),
    ordered(ALL),
  );
  for (const item of items) {
    assert.deepEqual(Object.keys(item), ['login', 'name', 'created_at', 'updated_at']);
    assertDateTime(item.created_at);
    assertDateTime(item.updated_at);
  }
  assert.deepEqual(
    items.find((item: { login: string }) => item.login === 'kappa'),
    { login: 'kappa', name: 'kappa name', created_at: day(2), updated_at: day(2) },
  );
});

test('organizations whose GitHub profile is not known yet (no dates) are not published: not listed, detail 404', async () => {
  const listed = await logins(`${LIST}?limit=100`);
  for (const login of ['Acme', 'github']) {
    assert.ok(!listed.includes(login), login);
    assert.equal((await get(`/api/v0/organizations/${login}`)).statusCode, 404, login);
  }
});

test('location filter: case-insensitive equality; empty ignored', async () => {
  assert.deepEqual(await logins(`${LIST}?location=worldwide`), ordered(['OWASP', 'zeta']));
  assert.deepEqual(await logins(`${LIST}?location=SAN%20FRANCISCO`), ['octo-org']);
  assert.deepEqual(await logins(`${LIST}?location=san%20francisco%2C%20ca`), ['kappa']);
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
  await assertNotFound(get, '/api/v0/organizations/', ['nobody', 'owas', 'ACME'], 'Organization not found');
});

test('no e-mail anywhere in organization responses', async () => {
  for (const url of [LIST, '/api/v0/organizations/OWASP', '/api/v0/organizations/zeta']) {
    assert.doesNotMatch((await get(url)).body, /mail|@|\.example/i, url);
  }
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/organizations/OWASP');
});
