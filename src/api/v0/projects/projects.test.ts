import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import type { ProjectTable } from '../../../db/schema.ts';
import { committee, entityLeader, leader, project } from '../../../../test/factories-community.ts';
import { day, member } from '../../../../test/factories.ts';
import {
  assertDefaultOrdering,
  assertInvalid,
  assertPagination,
  bothWays,
  itemKeys,
  keysInOrder,
} from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound, useTestApp } from '../../../../test/resources.ts';
import { testOrderings } from '../lists.test-helpers.ts';

const PATH = '/api/v0/projects/';
const ALLOWED = bothWays(['created_at', 'updated_at', 'name']);

type Project = Selectable<ProjectTable>;
let active: Project[];
const api = useTestApp(async (db) => {
  const at = (d: number) => new Date(Date.UTC(2023, 0, d)).toISOString();
  // Equal dates and names, and keys against the ids, so that only the id can break the ties.
  // [key, name, level, type (the default where absent), created day, updated day]
  const specs = [
    ['Nest', 'nest', 'flagship', 'code', 4, 8],
    ['zap', 'zap', 'flagship', 'tool', 2, 8],
    ['yara', 'amass', 'lab', 'documentation', 4, 1],
    ['xss', 'zap', 'production', 'code', 1, 6],
    ['wiki', 'bones', 'incubator', 'other', 4, 8],
    ['vault', 'amass', 'lab', 'documentation', 9, 3],
    ['unit', 'cobra', 'other', undefined, 3, 6],
  ] as const;
  active = [];
  for (const [key, name, level, type, created, updated] of specs) {
    const values = { key, name, level, created_at: at(created), updated_at: at(updated) };
    const described = key === 'Nest' ? { description: 'The API.' } : {};
    active.push(await project(db, { ...values, ...(type === undefined ? {} : { type }), ...described }));
  }
  await project(db, {
    key: 'retired',
    name: 'retired',
    level: 'flagship',
    type: 'tool',
    is_active: false,
    created_at: at(20),
  });
  // Leaders and the members they are: by the GitHub login the website gives (ana), by a unique display
  // name (bo), not by a name two members share (cy), never an unpublished member (dee, eve).
  const [ana, bo, cy, dee, eve] = [
    await leader(db, { key: 'ana', name: 'Ana', github_login: 'AnaGH' }),
    await leader(db, { key: 'bo', name: 'Bo Bell' }),
    await leader(db, { key: 'cy', name: 'Cy' }),
    await leader(db, { key: 'dee', name: 'dee', github_login: 'ghost' }),
    await leader(db, { key: 'eve', name: 'eve' }),
  ];
  await member(db, { login: 'anagh', name: 'Someone Else' });
  await member(db, { login: 'bbell', name: 'bo bell' });
  await member(db, { login: 'cy1', name: 'Cy' });
  await member(db, { login: 'cy2', name: 'cy' });
  await member(db, { login: 'ghost', created_at: null, updated_at: null });
  await member(db, { login: 'eve', created_at: day(1), updated_at: null });
  // Inserted out of position, so that the position, not the insertion, orders them.
  await entityLeader(db, { project_id: active[0]!.id, leader_id: bo.id, position: 2 });
  await entityLeader(db, { project_id: active[0]!.id, leader_id: ana.id, position: 1 });
  await entityLeader(db, { project_id: active[1]!.id, leader_id: cy.id, position: 1 });
  await entityLeader(db, { project_id: active[1]!.id, leader_id: dee.id, position: 2 });
  await entityLeader(db, { project_id: active[1]!.id, leader_id: eve.id, position: 3 });
  await entityLeader(db, { committee_id: (await committee(db)).id, leader_id: cy.id, position: 0 });
});

const { get } = api;
const inOrder = (rows: Project[], ordering = '-created_at') => keysInOrder(rows, ordering, 'key');

test('the list shows active projects only, by -created_at by default, with the list item fields', async () => {
  await assertDefaultOrdering(get, PATH, active, '-created_at');
  const item = (await get(PATH)).json().items.find((i: { key: string }) => i.key === 'Nest');
  assert.deepEqual(item, {
    key: 'Nest',
    name: 'nest',
    level: 'flagship',
    type: 'code',
    created_at: active[0]!.created_at.toISOString(),
    updated_at: active[0]!.updated_at.toISOString(),
  });
  assert.equal(
    (await get(PATH)).json().items.find((i: { key: string }) => i.key === 'unit').type,
    'other',
    'the default type',
  );
});

test('type: repeatable, any case, either of the values given; empty ignored; an unknown type is 400 naming the types', async () => {
  const ofType = (...types: string[]) => inOrder(active.filter((p) => types.includes(p.type)));
  assert.deepEqual(itemKeys(await get(`${PATH}?type=code`)), ofType('code'));
  assert.deepEqual(itemKeys(await get(`${PATH}?type=CODE`)), ofType('code'));
  assert.deepEqual(itemKeys(await get(`${PATH}?type=code&type=Tool`)), ofType('code', 'tool'));
  assert.deepEqual(itemKeys(await get(`${PATH}?type=documentation&type=other&type=code&type=tool`)), inOrder(active));
  assert.deepEqual(itemKeys(await get(`${PATH}?type=tool`)), ['zap'], 'the inactive tool project is not listed');
  assert.deepEqual(itemKeys(await get(`${PATH}?type=tool&level=lab`)), []);
  assert.deepEqual(
    itemKeys(await get(`${PATH}?type=documentation&ordering=name`)),
    inOrder(
      active.filter((p) => p.type === 'documentation'),
      'name',
    ),
  );
  assert.deepEqual(itemKeys(await get(`${PATH}?type=`)), inOrder(active));
  assert.deepEqual(itemKeys(await get(`${PATH}?type=&type=code`)), ofType('code'));
  for (const bad of ['bogus', 'code,tool', 'codes', '%00']) {
    const res = await get(`${PATH}?type=${bad}`);
    assert.equal(res.statusCode, 400, bad);
    assert.equal(res.json().message, 'Invalid request');
    assert.deepEqual(res.json().errors[0].loc.slice(0, 2), ['query', 'type'], bad);
    if (bad !== '%00')
      for (const type of ['code', 'documentation', 'other', 'tool'])
        assert.ok(res.json().errors[0].msg.includes(type), bad);
  }
  assert.equal((await get(`${PATH}?type=code&type=bogus`)).statusCode, 400);
  assert.equal(
    (await get(`${PATH}?${Array.from({ length: 21 }, () => 'type=code').join('&')}`)).statusCode,
    400,
    'at most 20 values',
  );
});

testOrderings(
  'every ordering, ascending and descending, several comma-separated; id breaks ties',
  get,
  PATH,
  () => active,
  ALLOWED,
  ['name,-created_at', '-updated_at,name', 'updated_at,created_at'],
);

test('level: any case, active projects only; empty is ignored; an unknown level is 400 naming the levels', async () => {
  for (const [value, level] of [
    ['flagship', 'flagship'],
    ['FLAGSHIP', 'flagship'],
    ['Lab', 'lab'],
    ['incubator', 'incubator'],
  ]) {
    const res = await get(`${PATH}?level=${value}`);
    assert.equal(res.statusCode, 200, value);
    assert.deepEqual(itemKeys(res), inOrder(active.filter((p) => p.level === level)), value);
    assert.equal(res.json().count, active.filter((p) => p.level === level).length);
  }
  assert.deepEqual(
    itemKeys(await get(`${PATH}?level=lab&ordering=-name`)),
    inOrder(
      active.filter((p) => p.level === 'lab'),
      '-name',
    ),
  );
  assert.deepEqual(itemKeys(await get(`${PATH}?level=`)), inOrder(active));
  for (const bad of ['unknown', 'flag', 'flagships']) {
    const res = await get(`${PATH}?level=${bad}`);
    assertInvalid(res, 'query', 'level', bad);
    for (const level of ['flagship', 'production', 'lab', 'incubator', 'other'])
      assert.ok(res.json().errors[0].msg.includes(level));
  }
});

test('q is accepted up to 1,000 characters (the search itself comes later); longer is 400', async () => {
  for (const q of ['name:nest', 'a'.repeat(1000), 'level:"lab" created_at:>2023-01-01']) {
    assert.equal((await get(`${PATH}?q=${encodeURIComponent(q)}`)).statusCode, 200, q.slice(0, 20));
  }
  assert.deepEqual(itemKeys(await get(`${PATH}?q=`)), inOrder(active));
  assertInvalid(await get(`${PATH}?q=${'a'.repeat(1001)}`), 'query', 'q');
});

test('pagination: pages, past the end, limit and page_size bounds, Link header', async () => {
  await assertPagination(get, PATH, inOrder(active));
});

test('detail: the key with or without the prefix, any case; leaders in position order', async () => {
  await assertDetail(get, PATH, ['Nest', 'nest', 'NEST', 'www-project-nest', 'WWW-Project-Nest'], {
    key: 'Nest',
    name: 'nest',
    level: 'flagship',
    type: 'code',
    description: 'The API.',
    leaders: [
      { key: 'anagh', name: 'Ana' },
      { key: 'bbell', name: 'Bo Bell' },
    ],
    created_at: active[0]!.created_at.toISOString(),
    updated_at: active[0]!.updated_at.toISOString(),
  });
  assert.deepEqual((await get('/api/v0/projects/zap')).json().leaders, [
    { key: null, name: 'Cy' },
    { key: null, name: 'dee' },
    { key: null, name: 'eve' },
  ]);
  // Each key names a member the API serves.
  for (const key of ['anagh', 'bbell']) assert.equal((await get(`/api/v0/members/${key}`)).statusCode, 200, key);
  assert.deepEqual((await get('/api/v0/projects/unit')).json().leaders, []);
});

test('detail: missing and inactive projects are 404', async () => {
  await assertNotFound(
    get,
    PATH,
    ['retired', 'www-project-retired', 'nothing', 'www-chapter-nest'],
    'Project not found',
  );
});

test('HEAD answers the list and the detail with 200 and no body', async () => {
  await assertHead(api, PATH, '/api/v0/projects/nest');
});
