import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day, organization, repository } from '../../../../test/factories.ts';
import { assertDateTime, assertInvalid, assertPagination } from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound } from '../../../../test/resources.ts';
import { useListApp } from '../lists.test-helpers.ts';

type Tracked = { id: number; name: string; created_at: string; updated_at: string };

const LIST = '/api/v0/repositories/';
const ORDERINGS = { key: 'name', byDefault: '-created_at,-updated_at', fields: ['created_at', 'updated_at'] } as const;
const list = useListApp<Tracked>(LIST, ORDERINGS, async (db, rows) => {
  const owasp = await organization(db, { login: 'OWASP' });
  const octo = await organization(db, { login: 'octo-org' });
  // Equal dates on purpose (the id breaks ties); `Nest` twice under different owners; a personal repository.
  const specs = [
    ['OWASP', owasp, 'Nest', 3, 5],
    ['OWASP', owasp, 'www-project', 1, 5],
    ['octo-org', octo, 'nest', 2, 5],
    ['OWASP', owasp, 'Other', 3, 6],
    ['octo-org', octo, 'hello-world', 1, 7],
    ['OWASP', owasp, 'zap', 3, 6],
    ['someone', null, 'dotfiles', 2, 4],
  ] as const;
  for (const [owner_login, organization_id, name, created, updated] of specs) {
    const values = { name, created_at: day(created), updated_at: day(updated) };
    const id = await repository(db, {
      owner_login,
      organization_id,
      description: `${owner_login}/${name}`,
      ...values,
    });
    rows.push({ id: Number(id), ...values });
  }
  await db
    .updateTable('repositories')
    .set({ commits_count: 1200, contributors_count: 40, forks_count: 90, stars_count: 1500, open_issues_count: 17 })
    .where('name', '=', 'Nest')
    .execute();
});
const { api, get, keys: names, ordered } = list;

const ALL = ['Nest', 'www-project', 'nest', 'Other', 'hello-world', 'zap', 'dotfiles'];

test('orderings: default -created_at,-updated_at, each value both ways, unknown → 400', async () => {
  await list.assertOrderingContract();
});

test('an item has exactly name, created_at, updated_at', async () => {
  const item = (await get(LIST)).json().items[0];
  assert.deepEqual(Object.keys(item).sort(), ['created_at', 'name', 'updated_at']);
  assertDateTime(item.created_at);
  assertDateTime(item.updated_at);
});

test('organization_id filter: the owner login, case-insensitive; empty ignored', async () => {
  assert.deepEqual(await names(`${LIST}?organization_id=owasp`), ordered(['Nest', 'www-project', 'Other', 'zap']));
  assert.deepEqual(await names(`${LIST}?organization_id=OCTO-ORG`), ordered(['nest', 'hello-world']));
  assert.deepEqual(await names(`${LIST}?organization_id=someone`), ['dotfiles']);
  assert.deepEqual(await names(`${LIST}?organization_id=owas`), []);
  assert.deepEqual(await names(`${LIST}?organization_id=`), ordered(ALL));
  assertInvalid(await get(`${LIST}?organization_id=${'x'.repeat(201)}`), 'query', 'organization_id');
});

test('q searches (more in repositories.search.test.ts); longer than 1,000 characters → 400', async () => {
  assert.deepEqual(await names(`${LIST}?q=${encodeURIComponent('stars:>100 name:"Nest"')}`), ['Nest']);
  assert.deepEqual(await names(`${LIST}?q=nest`), ordered(['Nest', 'nest']));
  assert.deepEqual(await names(`${LIST}?q=&organization_id=octo-org`), ordered(['nest', 'hello-world']));
  assert.equal((await get(`${LIST}?q=${'a'.repeat(1000)}`)).statusCode, 200);
  assertInvalid(await get(`${LIST}?q=${'a'.repeat(1001)}`), 'query', 'q');
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(ALL), { key: 'name', limit: 2 });
});

test('detail: every Repository field, names in any case; 404 "Repository not found"', async () => {
  await assertDetail(get, '/api/v0/repositories/', ['OWASP/Nest', 'owasp/NEST', 'Owasp/nest'], {
    name: 'Nest',
    description: 'OWASP/Nest',
    commits_count: 1200,
    contributors_count: 40,
    forks_count: 90,
    stars_count: 1500,
    open_issues_count: 17,
    created_at: new Date(day(3)).toISOString(),
    updated_at: new Date(day(5)).toISOString(),
  });
  const octoNest = (await get('/api/v0/repositories/OCTO-ORG/Nest')).json();
  assert.equal(octoNest.description, 'octo-org/nest');
  assert.equal(octoNest.stars_count, 0);
  await assertNotFound(
    get,
    '/api/v0/repositories/',
    ['OWASP/hello-world', 'nobody/Nest', 'OWASP/Nes'],
    'Repository not found',
  );
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/repositories/OWASP/Nest');
});
