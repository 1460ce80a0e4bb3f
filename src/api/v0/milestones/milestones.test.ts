import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import { organization, repository } from '../../../../test/factories.ts';
import {
  assertDateTime,
  assertHead,
  assertInvalid,
  assertOrderings,
  assertPagination,
  day,
  expectedOrder,
  keysOf,
  milestone,
} from '../../../../test/factories-github.ts';

let t: TestApp;
type Tracked = { id: number; title: string; state: 'open' | 'closed'; created_at: string; updated_at: string };
const rows: Tracked[] = [];

before(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  const owasp = await organization(db, { login: 'OWASP' });
  const nest = await repository(db, { owner_login: 'OWASP', organization_id: owasp, name: 'Nest' });
  const other = await repository(db, { owner_login: 'OWASP', organization_id: owasp, name: 'Other' });
  const octoNest = await repository(db, { owner_login: 'octo-org', name: 'Nest' });
  // Equal dates on purpose, so the id tie-breaker decides.
  const specs = [
    [octoNest, 1, 'a', 'open', 2, 5],
    [nest, 1, 'b', 'closed', 3, 5],
    [nest, 2, 'c', 'open', 3, 6],
    [other, 1, 'd', 'closed', 1, 5],
    [nest, 3, 'e', 'open', 2, 7],
    [other, 2, 'f', 'open', 3, 6],
  ] as const;
  for (const [repository_id, number, title, state, created, updated] of specs) {
    const values = { title, state, created_at: day(created), updated_at: day(updated) };
    rows.push({ id: await milestone(db, { repository_id, number, ...values }), ...values });
  }
  const detailed = { title: 'detailed', state: 'closed', created_at: day(0), updated_at: day(0) } as const;
  const id = await milestone(db, {
    repository_id: nest,
    number: 9,
    body: 'Release 1.0',
    url: 'https://github.com/OWASP/Nest/milestone/9',
    open_issues_count: 2,
    closed_issues_count: 40,
    due_on: day(30),
    ...detailed,
  });
  rows.push({ id, ...detailed });
});
after(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url });
const head = (url: string) => t.app.inject({ method: 'HEAD', url });
const LIST = '/api/v0/milestones/';
const titles = (url: string) => keysOf(get, url, 'title');
const ordered = (which: string[]) => expectedOrder(rows, '-created_at,-updated_at').map((r) => r.title).filter((x) => which.includes(x));
const ALL = ['a', 'b', 'c', 'd', 'e', 'f', 'detailed'];

test('orderings: default -created_at,-updated_at, each value both ways, unknown → 400', async () => {
  await assertOrderings(get, LIST, rows, 'title', ['created_at', 'updated_at'], '-created_at,-updated_at');
});

test('an item has exactly number, title, state, created_at, updated_at', async () => {
  const item = (await get(`${LIST}?ordering=created_at&limit=1`)).json().items[0];
  assert.deepEqual(Object.keys(item).sort(), ['created_at', 'number', 'state', 'title', 'updated_at']);
  assert.equal(item.number, 9);
  assertDateTime(item.created_at);
});

test('organization, repository and state filters', async () => {
  assert.deepEqual(await titles(`${LIST}?organization=owasp`), ordered(['b', 'c', 'd', 'e', 'f', 'detailed']));
  assert.deepEqual(await titles(`${LIST}?organization=OCTO-ORG`), ['a']);
  assert.deepEqual(await titles(`${LIST}?repository=nest`), ordered(['a', 'b', 'c', 'e', 'detailed']));
  assert.deepEqual(await titles(`${LIST}?organization=OWASP&repository=NEST&state=Open`), ordered(['c', 'e']));
  assert.deepEqual(await titles(`${LIST}?state=closed`), ordered(['b', 'd', 'detailed']));
  assert.deepEqual(await titles(`${LIST}?organization=&repository=&state=`), ordered(ALL));
  assert.deepEqual(await titles(`${LIST}?repository=missing`), []);
  for (const value of ['closed,open', 'done']) assertInvalid(await get(`${LIST}?state=${value}`), 'query', 'state', value);
  assertInvalid(await get(`${LIST}?organization=${'x'.repeat(201)}`), 'query', 'organization');
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(ALL), 'title');
});

test('detail: every Milestone field; names in any case; due_on null when absent', async () => {
  const res = await get('/api/v0/milestones/owasp/NEST/9');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    number: 9,
    title: 'detailed',
    state: 'closed',
    body: 'Release 1.0',
    url: 'https://github.com/OWASP/Nest/milestone/9',
    open_issues_count: 2,
    closed_issues_count: 40,
    due_on: new Date(day(30)).toISOString(),
    created_at: new Date(day(0)).toISOString(),
    updated_at: new Date(day(0)).toISOString(),
  });
  const other = (await get('/api/v0/milestones/OCTO-ORG/nest/1')).json();
  assert.equal(other.title, 'a');
  assert.equal(other.due_on, null);
  assert.equal(other.open_issues_count, 0);
});

test('detail: unknown → 404 "Milestone not found"; a non-integer number → 400', async () => {
  for (const url of ['OWASP/Nest/99', 'octo-org/Other/1', 'nobody/Nest/1']) {
    const res = await get(`/api/v0/milestones/${url}`);
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: 'Milestone not found' });
  }
  for (const number of ['abc', '1.5', '1e2', '-1', '0x1', '99999999999']) {
    assertInvalid(await get(`/api/v0/milestones/OWASP/Nest/${number}`), 'path', 'milestone_id', number);
  }
});

test('HEAD on the list and the detail', async () => {
  await assertHead(get, head, LIST);
  await assertHead(get, head, '/api/v0/milestones/OWASP/Nest/9');
});
