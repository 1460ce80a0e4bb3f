// Structured search `q` on the projects list, through HTTP: name and level (strings), stars (number),
// created_at and updated_at (dates), with the level filter, ordering and pagination; inactive projects never show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { project } from '../../../../test/factories-community.ts';
import { repository } from '../../../../test/factories.ts';
import {
  assertSearchPages,
  compareDay,
  OPS,
  qParameter,
  searchContractTests,
  searchUrl,
  spellings,
} from '../../../../test/factories-search.ts';
import { keysInOrder, keysOf } from '../../../../test/lists.ts';
import { useTestApp } from '../../../../test/resources.ts';

type Project = Selectable<DB['projects']>;
const active: Project[] = [];

// [key, name, level, created_at, updated_at]; instants on both sides of UTC midnight.
const SPECS = [
  ['nest', 'OWASP Nest', 'flagship', '2024-05-01T00:00:00Z', '2024-06-01T00:00:00Z'],
  ['nest-ui', 'nest-ui', 'lab', '2024-05-01T23:59:59.999Z', '2024-06-01T23:59:59.999Z'],
  ['juice-shop', 'Juice Shop', 'flagship', '2024-04-30T23:59:59.999Z', '2024-05-31T23:59:59.999Z'],
  ['zap', 'ZAP', 'flagship', '2024-05-02T00:00:00Z', '2024-06-02T00:00:00Z'],
  ['coverage', '100% Coverage', 'incubator', '2024-05-01T12:00:00+14:00', '2024-06-01T12:00:00-12:00'],
  ['snake', 'snake_case tool', 'other', '2023-01-01T08:00:00Z', '2023-06-01T08:00:00Z'],
  ['snakex', 'snakeXcase', 'production', '2020-02-29T10:00:00Z', '2024-02-29T10:00:00Z'],
  ['dragon', 'Threat Dragon', 'production', '2019-12-31T23:00:00Z', '2024-06-01T08:00:00Z'],
] as const;

const { get } = useTestApp(async (db) => {
  for (const [key, name, level, created_at, updated_at] of SPECS) {
    active.push(await project(db, { key, name, level, created_at, updated_at }));
  }
  // Inactive projects match many of the searches below and must never be listed.
  await project(db, {
    key: 'nest-archive',
    name: 'Nest Archive',
    level: 'lab',
    is_active: false,
    created_at: '2024-05-01T10:00:00Z',
  });
  await project(db, {
    key: 'old-zap',
    name: 'ZAP Old',
    level: 'flagship',
    is_active: false,
    created_at: '2024-05-01T11:00:00Z',
  });
  // Stars: the most starred stored repository a project names, forks aside. juice-shop names one that
  // is not stored, the others name none: they match no numeric condition.
  const paths = {
    nest: ['owasp/www-project-nest', 'owasp/nest'],
    zap: ['zaproxy/zaproxy', 'someone/zaproxy'],
    dragon: ['owasp/threat-dragon'],
    'juice-shop': ['juice-shop/juice-shop'],
  };
  for (const [key, list] of Object.entries(paths))
    await db
      .updateTable('projects')
      .set({ repository_paths: JSON.stringify(list) })
      .where('key', '=', key)
      .execute();
  await repository(db, { owner_login: 'OWASP', name: 'www-project-nest', stars_count: 5 });
  await repository(db, { owner_login: 'OWASP', name: 'Nest', stars_count: 300 });
  await repository(db, { owner_login: 'zaproxy', name: 'zaproxy', stars_count: 12000 });
  await repository(db, { owner_login: 'someone', name: 'zaproxy', stars_count: 99_999, is_fork: true });
  await repository(db, { owner_login: 'OWASP', name: 'threat-dragon', stars_count: 0 });
  await repository(db, { owner_login: 'OWASP', name: 'unnamed', stars_count: 50_000 });
});

const PATH = '/api/v0/projects/';
const search = (q: string, params: Record<string, string> = {}) => keysOf(get, searchUrl(PATH, q, params), 'key');
const expected = (keep: (p: Project) => boolean, ordering = '-created_at') =>
  keysInOrder(active.filter(keep), ordering, 'key');
const ALL = () => true;

test('name: substring ignoring case, exact when quoted; inactive projects never match', async () => {
  assert.deepEqual(await search('name:nest'), ['nest-ui', 'nest']);
  assert.deepEqual(await search('name:NEST'), ['nest-ui', 'nest']);
  assert.deepEqual(await search('name:"OWASP Nest"'), ['nest']);
  assert.deepEqual(await search('name:"owasp nest"'), []);
  assert.deepEqual(await search('name:"Nest"'), [], 'quoted is not a substring');
  assert.deepEqual(await search('name:zap'), ['zap']);
  assert.deepEqual(await search('name:archive'), []);
  assert.deepEqual(await search('name:100%'), ['coverage']);
  assert.deepEqual(await search('name:e_c'), ['snake'], 'not snakeXcase');
  assert.deepEqual(await search('name:"Threat Dragon"'), ['dragon']);
  assert.deepEqual(
    await search('name:threat dragon'),
    ['dragon'],
    'two conditions: name has "threat", name has "dragon"',
  );
});

test('level: substring ignoring case, exact (case-sensitive, stored lower-case) when quoted', async () => {
  assert.deepEqual(
    await search('level:lab'),
    expected((p) => p.level === 'lab'),
  );
  assert.deepEqual(
    await search('level:LAB'),
    expected((p) => p.level === 'lab'),
  );
  assert.deepEqual(
    await search('level:flag'),
    expected((p) => p.level === 'flagship'),
  );
  assert.deepEqual(
    await search('level:o'),
    expected((p) => p.level.includes('o')),
    'production, incubator, other',
  );
  assert.deepEqual(
    await search('level:"flagship"'),
    expected((p) => p.level === 'flagship'),
  );
  assert.deepEqual(await search('level:"Flagship"'), []);
  assert.deepEqual(await search('level:"flag"'), []);
  assert.deepEqual(await search('level:unknown'), []);
  assert.deepEqual(await search('level:>lab'), expected(ALL), 'an operator on a string drops the condition');
});

test('created_at and updated_at: whole UTC days, every operator, both spellings and both date forms', async () => {
  const cases = [
    ['created_at', '2024-05-01'],
    ['created_at', '2024-04-30'],
    ['updated_at', '2024-06-01'],
    ['updated_at', '2024-05-31'],
  ] as const;
  for (const [field, day] of cases) {
    for (const op of OPS) {
      const want = expected((p) => compareDay(p[field], op, day));
      for (const q of [...spellings(field, op, day), ...spellings(field, op, day.replaceAll('-', ''))]) {
        assert.deepEqual(await search(q), want, q);
      }
    }
  }
  assert.deepEqual(await search('created_at:2024-05-01'), ['nest-ui', 'nest']);
  assert.deepEqual(
    await search('created_at:2024-04-30'),
    ['juice-shop', 'coverage'],
    '12:00 at +14:00 is still 30 April in UTC',
  );
  assert.deepEqual(
    await search('updated_at:20240601'),
    expected((p) => ['nest', 'nest-ui', 'dragon'].includes(p.key)),
  );
  assert.deepEqual(await search('created_at:20200229'), ['snakex']);
  assert.deepEqual(await search('created_at:2023-02-29'), expected(ALL), 'not a calendar day: dropped');
  assert.deepEqual(await search('created_at<=9999-12-31'), expected(ALL));
  assert.deepEqual(await search('updated_at>9999-12-31'), []);
  assert.deepEqual(await search('created_at:0000-01-01'), expected(ALL), 'year 0: dropped');
});

test('free text searches the name; fields of other resources are unknown here and dropped', async () => {
  assert.deepEqual(await search('nest'), ['nest-ui', 'nest']);
  assert.deepEqual(await search('owasp nest'), ['nest']);
  assert.deepEqual(await search('"ZAP"'), ['zap']);
  assert.deepEqual(await search('nest level:lab'), ['nest-ui']);
  for (const q of ['forks:>1', 'archived:true', 'language:python', 'country:india', 'region:europe']) {
    assert.deepEqual(await search(q), expected(ALL), q);
  }
  assert.deepEqual(await search('forks:>1 language:x name:zap'), ['zap']);
  assert.deepEqual(
    await search('level:flagship created_at:2024-02-30 updated_at>=2024-06-01'),
    expected((p) => p.level === 'flagship' && compareDay(p.updated_at, '>=', '2024-06-01')),
  );
});

test('q combines with the level filter, ordering and pagination', async () => {
  assert.deepEqual(await search('nest', { level: 'flagship' }), ['nest']);
  assert.deepEqual(await search('nest', { level: 'LAB' }), ['nest-ui']);
  assert.deepEqual(await search('level:flag', { level: 'lab' }), [], 'both apply');
  for (const ordering of ['name', '-name', 'updated_at', '-updated_at,name']) {
    assert.deepEqual(
      await search('level:o', { ordering }),
      expected((p) => p.level.includes('o'), ordering),
      ordering,
    );
  }
  const all = expected((p) => p.created_at.getTime() >= Date.parse('2024-01-01'), 'name');
  assert.equal(all.length, 5);
  await assertSearchPages(get, PATH, 'created_at>=2024-01-01', { ordering: 'name' }, all, {
    key: 'key',
    limit: 2,
    linkQ: 'q=created_at%3E%3D2024-01-01',
  });
});

searchContractTests(get, PATH, 'key', () => expected(ALL));

test('OpenAPI: q documents its grammar and the searchable fields', async () => {
  const q = await qParameter(get, PATH);
  assert.equal(q.schema.maxLength, 1000);
  assert.ok(q.description.includes('`level` (string)') && q.description.includes('`updated_at` (date)'), q.description);
  assert.ok(q.description.includes('`stars` (number)'), q.description);
  assert.ok(!q.description.includes('`forks`'), 'only the fields of projects');
});

test('stars: the largest star count among the stored repositories a project names (forks aside); none known, no match', async () => {
  assert.deepEqual(await search('stars:>100'), ['zap', 'nest']);
  assert.deepEqual(await search('stars>=300'), ['zap', 'nest']);
  assert.deepEqual(await search('stars:300'), ['nest'], 'the max, not the sum (305)');
  assert.deepEqual(await search('stars:305'), []);
  assert.deepEqual(await search('stars:<1'), ['dragon']);
  assert.deepEqual(await search('stars:>=0'), ['zap', 'nest', 'dragon'], 'juice-shop names no stored repository');
  assert.deepEqual(await search('stars:>12000'), [], 'the fork does not count');
  assert.deepEqual(await search('nest stars:>100'), ['nest']);
  assert.deepEqual(await search('stars:>100', { ordering: 'name' }), ['nest', 'zap']);
  assert.deepEqual(await search('stars:abc'), expected(ALL), 'a bad number drops the condition');
  assert.deepEqual(await search('stars:>9007199254740991'), [], 'the largest number the parser takes');
});
