import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import type { ProjectTable } from '../../../db/schema.ts';
import {
  assertInvalidQuery,
  assertOrderings,
  assertPagination,
  assertUnknownOrdering,
  committee,
  entityLeader,
  expectedOrder,
  leader,
  project,
} from '../../../../test/factories-community.ts';

const PATH = '/api/v0/projects/';
const ALLOWED = ['created_at', '-created_at', 'updated_at', '-updated_at', 'name', '-name'];

type Project = Selectable<ProjectTable>;
let t: TestApp;
let active: Project[];
before(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  const at = (d: number) => new Date(Date.UTC(2023, 0, d)).toISOString();
  // Equal dates and names, and keys against the ids, so that only the id can break the ties.
  active = [
    await project(db, { key: 'Nest', name: 'nest', level: 'flagship', description: 'The API.', created_at: at(4), updated_at: at(8) }),
    await project(db, { key: 'zap', name: 'zap', level: 'flagship', created_at: at(2), updated_at: at(8) }),
    await project(db, { key: 'yara', name: 'amass', level: 'lab', created_at: at(4), updated_at: at(1) }),
    await project(db, { key: 'xss', name: 'zap', level: 'production', created_at: at(1), updated_at: at(6) }),
    await project(db, { key: 'wiki', name: 'bones', level: 'incubator', created_at: at(4), updated_at: at(8) }),
    await project(db, { key: 'vault', name: 'amass', level: 'lab', created_at: at(9), updated_at: at(3) }),
    await project(db, { key: 'unit', name: 'cobra', level: 'other', created_at: at(3), updated_at: at(6) }),
  ];
  await project(db, { key: 'retired', name: 'retired', level: 'flagship', is_active: false, created_at: at(20) });
  const [ana, bo, cy] = [await leader(db, { key: 'ana', name: 'Ana' }), await leader(db, { key: 'bo', name: 'Bo' }), await leader(db, { key: 'cy', name: 'Cy' })];
  // Inserted out of position, so that the position, not the insertion, orders them.
  await entityLeader(db, { project_id: active[0]!.id, leader_id: bo.id, position: 2 });
  await entityLeader(db, { project_id: active[0]!.id, leader_id: ana.id, position: 1 });
  await entityLeader(db, { project_id: active[1]!.id, leader_id: cy.id, position: 1 });
  await entityLeader(db, { committee_id: (await committee(db)).id, leader_id: cy.id, position: 0 });
});
after(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url });
const keys = (res: { json(): { items: { key: string }[] } }) => res.json().items.map((i) => i.key);
const inOrder = (rows: Project[], ordering = '-created_at') => expectedOrder(rows, ordering).map((p) => p.key);

test('the list shows active projects only, by -created_at by default, with the list item fields', async () => {
  for (const url of [PATH, '/api/v0/projects', `${PATH}?ordering=`]) {
    const res = await get(url);
    assert.equal(res.statusCode, 200, url);
    assert.deepEqual(keys(res), inOrder(active), url);
    assert.equal(res.json().count, active.length);
  }
  const item = (await get(PATH)).json().items.find((i: { key: string }) => i.key === 'Nest');
  assert.deepEqual(item, {
    key: 'Nest',
    name: 'nest',
    level: 'flagship',
    created_at: active[0]!.created_at.toISOString(),
    updated_at: active[0]!.updated_at.toISOString(),
  });
});

test('every ordering, ascending and descending, several comma-separated; id breaks ties', async () => {
  await assertOrderings(get, PATH, active, [...ALLOWED, 'name,-created_at', '-updated_at,name', 'updated_at,created_at']);
});

test('an unknown ordering is 400 naming the allowed values', async () => {
  await assertUnknownOrdering(get, PATH, ALLOWED);
});

test('level: any case, active projects only; empty is ignored; an unknown level is 400 naming the levels', async () => {
  for (const [value, level] of [['flagship', 'flagship'], ['FLAGSHIP', 'flagship'], ['Lab', 'lab'], ['incubator', 'incubator']]) {
    const res = await get(`${PATH}?level=${value}`);
    assert.equal(res.statusCode, 200, value);
    assert.deepEqual(keys(res), inOrder(active.filter((p) => p.level === level)), value);
    assert.equal(res.json().count, active.filter((p) => p.level === level).length);
  }
  assert.deepEqual(keys(await get(`${PATH}?level=lab&ordering=-name`)), inOrder(active.filter((p) => p.level === 'lab'), '-name'));
  assert.deepEqual(keys(await get(`${PATH}?level=`)), inOrder(active));
  for (const bad of ['unknown', 'flag', 'flagships']) {
    const res = await get(`${PATH}?level=${bad}`);
    assertInvalidQuery(res, 'level', bad);
    for (const level of ['flagship', 'production', 'lab', 'incubator', 'other']) assert.ok(res.json().errors[0].msg.includes(level));
  }
});

test('q is accepted up to 1,000 characters (the search itself comes later); longer is 400', async () => {
  for (const q of ['name:nest', 'a'.repeat(1000), 'level:"lab" created_at:>2023-01-01']) {
    assert.equal((await get(`${PATH}?q=${encodeURIComponent(q)}`)).statusCode, 200, q.slice(0, 20));
  }
  assert.deepEqual(keys(await get(`${PATH}?q=`)), inOrder(active));
  assertInvalidQuery(await get(`${PATH}?q=${'a'.repeat(1001)}`), 'q');
});

test('pagination: pages, past the end, limit and page_size bounds, Link header', async () => {
  await assertPagination(get, PATH, inOrder(active));
});

test('detail: the key with or without the prefix, any case; leaders in position order', async () => {
  for (const id of ['Nest', 'nest', 'NEST', 'www-project-nest', 'WWW-Project-Nest']) {
    const res = await get(`/api/v0/projects/${id}`);
    assert.equal(res.statusCode, 200, id);
    assert.deepEqual(res.json(), {
      key: 'Nest',
      name: 'nest',
      level: 'flagship',
      description: 'The API.',
      leaders: [{ key: 'ana', name: 'Ana' }, { key: 'bo', name: 'Bo' }],
      created_at: active[0]!.created_at.toISOString(),
      updated_at: active[0]!.updated_at.toISOString(),
    });
  }
  assert.deepEqual((await get('/api/v0/projects/zap')).json().leaders, [{ key: 'cy', name: 'Cy' }]);
  assert.deepEqual((await get('/api/v0/projects/unit')).json().leaders, []);
});

test('detail: missing and inactive projects are 404', async () => {
  for (const id of ['retired', 'www-project-retired', 'nothing', 'www-chapter-nest']) {
    const res = await get(`/api/v0/projects/${id}`);
    assert.equal(res.statusCode, 404, id);
    assert.deepEqual(res.json(), { message: 'Project not found' });
  }
});

test('HEAD answers the list and the detail with 200 and no body', async () => {
  for (const url of [PATH, '/api/v0/projects/nest']) {
    const res = await t.app.inject({ method: 'HEAD', url });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.body, '');
  }
});
