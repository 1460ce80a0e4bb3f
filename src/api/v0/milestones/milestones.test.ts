import { test } from 'node:test';
import assert from 'node:assert/strict';
import { day } from '../../../../test/factories.ts';
import { milestone } from '../../../../test/factories-github.ts';
import { assertDateTime, assertInvalid, assertPagination } from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound } from '../../../../test/resources.ts';
import { useTrackedApp } from '../tracked.test-helpers.ts';

const LIST = '/api/v0/milestones/';

const { api, titles, ordered } = useTrackedApp(
  LIST,
  (db) => (values) => milestone(db, values),
  async (db, { nest }) => {
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
    return [{ id, ...detailed }];
  },
);

const { get } = api;
const ALL = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'detailed'];

test('an item has exactly number, title, state, url, created_at, updated_at (the url as the detail gives it)', async () => {
  const item = (await get(`${LIST}?ordering=created_at&limit=1`)).json().items[0];
  assert.deepEqual(Object.keys(item), ['number', 'title', 'state', 'url', 'created_at', 'updated_at']);
  assert.equal(item.number, 9);
  assert.equal(item.url, 'https://github.com/OWASP/Nest/milestone/9');
  assert.equal(item.url, (await get('/api/v0/milestones/OWASP/Nest/9')).json().url);
  assertDateTime(item.created_at);
});

test('organization, repository and state filters', async () => {
  assert.deepEqual(await titles(`${LIST}?organization=owasp`), ordered(['a', 'b', 'c', 'e', 'f', 'detailed']));
  assert.deepEqual(await titles(`${LIST}?organization=OCTO-ORG`), ordered(['d', 'g']));
  assert.deepEqual(await titles(`${LIST}?repository=nest`), ordered(['a', 'b', 'd', 'e', 'g', 'detailed']));
  assert.deepEqual(await titles(`${LIST}?organization=OWASP&repository=NEST&state=Open`), ordered(['a', 'e']));
  assert.deepEqual(await titles(`${LIST}?state=closed`), ordered(['b', 'd', 'detailed']));
  assert.deepEqual(await titles(`${LIST}?organization=&repository=&state=`), ordered(ALL));
  assert.deepEqual(await titles(`${LIST}?repository=missing`), []);
  for (const value of ['closed,open', 'done'])
    assertInvalid(await get(`${LIST}?state=${value}`), 'query', 'state', value);
  assertInvalid(await get(`${LIST}?organization=${'x'.repeat(201)}`), 'query', 'organization');
});

test('pagination: pages, envelope, Link header, limit and page bounds', async () => {
  await assertPagination(get, LIST, ordered(ALL), { key: 'title', limit: 2 });
});

test('detail: every Milestone field; names in any case; due_on null when absent', async () => {
  await assertDetail(get, '/api/v0/milestones/', ['owasp/NEST/9'], {
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
  assert.equal(other.title, 'd');
  assert.equal(other.due_on, null);
  assert.equal(other.open_issues_count, 0);
});

test('detail: unknown → 404 "Milestone not found"; a non-integer number → 400', async () => {
  await assertNotFound(
    get,
    '/api/v0/milestones/',
    ['OWASP/Nest/99', 'octo-org/Other/1', 'nobody/Nest/1'],
    'Milestone not found',
  );
  for (const number of ['abc', '1.5', '1e2', '-1', '0x1', '99999999999']) {
    assertInvalid(await get(`/api/v0/milestones/OWASP/Nest/${number}`), 'path', 'milestone_id', number);
  }
});

test('HEAD on the list and the detail', async () => {
  await assertHead(api, LIST, '/api/v0/milestones/OWASP/Nest/9');
});
