// Structured search `q` on the repositories list, through HTTP: every field with matching and
// non-matching rows, both operator spellings, dropped conditions, and input that must never fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repository } from '../../../../test/factories.ts';
import {
  assertSearchPages,
  compareDay,
  compareNumber,
  OPS,
  qParameter,
  searchContractTests,
  searchUrl,
  spellings,
} from '../../../../test/factories-search.ts';
import { keysInOrder, keysOf } from '../../../../test/lists.ts';
import { useTestApp } from '../../../../test/resources.ts';

type Repo = {
  id: number;
  name: string;
  owner: string;
  language: string;
  stars: number;
  forks: number;
  contributors: number;
  archived: boolean;
  created_at: string;
  updated_at: string;
};
const rows: Repo[] = [];

// Instants sit on both sides of UTC midnight; snake_case is 1 May in +14:00 but 30 April in UTC.
const SPECS: Omit<Repo, 'id'>[] = [
  {
    name: 'Nest',
    owner: 'OWASP',
    language: 'Python',
    stars: 1500,
    forks: 90,
    contributors: 40,
    archived: false,
    created_at: '2024-05-01T00:00:00Z',
    updated_at: '2024-06-01T00:00:00Z',
  },
  {
    name: 'nest-api',
    owner: 'OWASP',
    language: 'TypeScript',
    stars: 100,
    forks: 10,
    contributors: 5,
    archived: false,
    created_at: '2024-05-01T23:59:59.999Z',
    updated_at: '2024-06-01T23:59:59.999Z',
  },
  {
    name: 'OWASP Nest',
    owner: 'octo-org',
    language: 'Python',
    stars: 10,
    forks: 0,
    contributors: 1,
    archived: true,
    created_at: '2024-04-30T23:59:59.999Z',
    updated_at: '2024-05-31T23:59:59.999Z',
  },
  {
    name: '100%-coverage',
    owner: 'octo-org',
    language: 'JavaScript',
    stars: 0,
    forks: 0,
    contributors: 0,
    archived: false,
    created_at: '2024-05-02T00:00:00Z',
    updated_at: '2024-06-02T00:00:00Z',
  },
  {
    name: 'snake_case',
    owner: 'OWASP',
    language: 'Go',
    stars: 5,
    forks: 1,
    contributors: 2,
    archived: true,
    created_at: '2024-05-01T12:00:00+14:00',
    updated_at: '2024-06-01T12:00:00-12:00',
  },
  {
    name: 'snakeXcase',
    owner: 'octo-org',
    language: 'Java',
    stars: 10,
    forks: 2,
    contributors: 3,
    archived: false,
    created_at: '2023-01-01T08:00:00Z',
    updated_at: '2023-06-01T08:00:00Z',
  },
  {
    name: 'back\\slash',
    owner: 'someone',
    language: '',
    stars: 2147483647,
    forks: 5,
    contributors: 10,
    archived: false,
    created_at: '2020-02-29T10:00:00Z',
    updated_at: '2024-02-29T10:00:00Z',
  },
  {
    name: 'say "hi"',
    owner: 'someone',
    language: 'Rust',
    stars: 42,
    forks: 7,
    contributors: 10,
    archived: true,
    created_at: '2019-12-31T23:00:00Z',
    updated_at: '2024-06-01T08:00:00Z',
  },
  {
    name: 'zap',
    owner: 'OWASP',
    language: 'Java',
    stars: 100,
    forks: 50,
    contributors: 100,
    archived: false,
    created_at: '2024-05-01T09:30:00Z',
    updated_at: '2024-06-01T09:30:00Z',
  },
  {
    name: 'emoji-\u{1F600}',
    owner: 'someone',
    language: 'C++',
    stars: 3,
    forks: 0,
    contributors: 1,
    archived: false,
    created_at: '2021-07-04T00:00:00Z',
    updated_at: '2021-07-04T00:00:00Z',
  },
];

const { get } = useTestApp(async (db) => {
  for (const spec of SPECS) {
    const id = await repository(db, {
      owner_login: spec.owner,
      name: spec.name,
      language: spec.language,
      stars_count: spec.stars,
      forks_count: spec.forks,
      contributors_count: spec.contributors,
      is_archived: spec.archived,
      created_at: spec.created_at,
      updated_at: spec.updated_at,
    });
    rows.push({ id: Number(id), ...spec });
  }
});

const LIST = '/api/v0/repositories/';
const DEFAULT = '-created_at,-updated_at';
const search = (q: string, params: Record<string, string> = {}) => keysOf(get, searchUrl(LIST, q, params), 'name');
/** The names the list must give for the rows `keep` selects, in the list's order. */
const expected = (keep: (r: Repo) => boolean, ordering = DEFAULT) => keysInOrder(rows.filter(keep), ordering, 'name');
const ALL = () => true;

test('name: unquoted is a case-insensitive substring; quoted is exact and case-sensitive', async () => {
  const nests = expected((r) => /nest/i.test(r.name));
  assert.equal(nests.length, 3);
  assert.deepEqual(await search('name:nest'), nests);
  assert.deepEqual(await search('name:NeSt'), nests);
  assert.deepEqual(await search('name:"Nest"'), ['Nest']);
  assert.deepEqual(await search('name:"nest"'), []);
  assert.deepEqual(await search('name:"OWASP Nest"'), ['OWASP Nest']);
  assert.deepEqual(await search('name:"OWASP"'), [], 'quoted is not a substring');
  // Unquoted, the second word is free text: name contains "owasp" and name contains "nest".
  assert.deepEqual(await search('name:OWASP Nest'), ['OWASP Nest']);
  assert.deepEqual(await search('name:qqq'), []);
});

test('%, _, backslash and quotes in a value match themselves', async () => {
  assert.deepEqual(await search('name:100%'), ['100%-coverage']);
  assert.deepEqual(await search('name:%'), ['100%-coverage']);
  assert.deepEqual(await search('name:"100%"'), [], 'exact: % is no wildcard either');
  assert.deepEqual(await search('name:"100%-coverage"'), ['100%-coverage']);
  assert.deepEqual(await search('name:_'), ['snake_case']);
  assert.deepEqual(await search('name:e_c'), ['snake_case'], 'not snakeXcase');
  assert.deepEqual(await search('name:k\\s'), ['back\\slash']);
  assert.deepEqual(await search('name:\\'), ['back\\slash']);
  assert.deepEqual(await search('name:"back\\\\slash"'), ['back\\slash'], '\\\\ inside quotes is one backslash');
  assert.deepEqual(await search('name:"say \\"hi\\""'), ['say "hi"']);
  assert.deepEqual(await search('name:"hi"'), []);
  assert.deepEqual(await search('name:hi"'), ['say "hi"'], 'a quote inside a bare value is a character');
  assert.deepEqual(await search('name:\u{1F600}'), ['emoji-\u{1F600}']);
});

test('language: substring ignoring case, or exact when quoted', async () => {
  for (const [query, match] of [
    ['language:python', (r) => r.language === 'Python'],
    ['language:PYTHON', (r) => r.language === 'Python'],
    ['language:java', (r) => r.language.startsWith('Java')],
    ['language:"Java"', (r) => r.language === 'Java'],
  ] satisfies [string, Parameters<typeof expected>[0]][]) {
    assert.deepEqual(await search(query), expected(match), query);
  }
  assert.deepEqual(await search('language:"java"'), []);
  assert.deepEqual(
    await search('language:script'),
    expected((r) => r.language.endsWith('Script')),
  );
  assert.deepEqual(await search('language:++'), ['emoji-\u{1F600}']);
  assert.deepEqual(await search('language:cobol'), []);
  assert.deepEqual(await search('language:""'), expected(ALL), 'an empty value is dropped');
});

test('stars, forks, contributors: every operator, after the colon or instead of it', async () => {
  const fields = [
    ['stars', 'stars', [100, 10, 7]],
    ['forks', 'forks', [5, 0, 3]],
    ['contributors', 'contributors', [10, 1, 4]],
  ] as const;
  for (const [field, key, values] of fields) {
    for (const value of values) {
      for (const op of OPS) {
        const want = expected((r) => compareNumber(r[key], op, value));
        for (const q of spellings(field, op, String(value))) assert.deepEqual(await search(q), want, q);
      }
    }
  }
  assert.deepEqual(await search('stars:=100'), ['nest-api', 'zap']);
  assert.deepEqual(
    await search('STARS:>1000'),
    expected((r) => r.stars > 1000),
    'field names ignore case',
  );
  assert.deepEqual(await search('stars:"42"'), ['say "hi"'], 'a quoted number');
});

test('numbers beyond the 32-bit columns compare instead of failing', async () => {
  assert.deepEqual(await search('stars:2147483647'), ['back\\slash']);
  assert.deepEqual(await search('stars:>2147483647'), []);
  assert.deepEqual(await search('stars:<=9007199254740991'), expected(ALL));
  assert.deepEqual(await search('stars>=-9007199254740991'), expected(ALL));
  assert.deepEqual(await search('stars:>-1 forks:<9007199254740991'), expected(ALL));
  assert.deepEqual(await search('stars:<0'), []);
});

test('archived: every true and false spelling, any case; anything else is dropped', async () => {
  for (const word of ['true', '1', 'yes', 'on', 'TRUE', 'Yes', 'oN', '"yes"']) {
    assert.deepEqual(
      await search(`archived:${word}`),
      expected((r) => r.archived),
      word,
    );
  }
  for (const word of ['false', '0', 'no', 'off', 'False', 'NO', 'Off', '"0"']) {
    assert.deepEqual(
      await search(`archived:${word}`),
      expected((r) => !r.archived),
      word,
    );
  }
  for (const q of ['archived:maybe', 'archived:2', 'archived:y', 'archived=true', 'archived:>false', 'archived:']) {
    assert.deepEqual(await search(q), expected(ALL), q);
  }
});

test('created_at and updated_at: whole UTC days, every operator, both spellings and both date forms', async () => {
  const cases = [
    ['created_at', 'created_at', '2024-05-01'],
    ['created_at', 'created_at', '2024-04-30'],
    ['updated_at', 'updated_at', '2024-06-01'],
    ['updated_at', 'updated_at', '2024-05-31'],
  ] as const;
  for (const [field, key, day] of cases) {
    for (const op of OPS) {
      const want = expected((r) => compareDay(r[key], op, day));
      for (const q of [...spellings(field, op, day), ...spellings(field, op, day.replaceAll('-', ''))]) {
        assert.deepEqual(await search(q), want, q);
      }
    }
  }
  // The same, written out: the day runs from 00:00 to 24:00 UTC, whatever offset the value was stored with.
  assert.deepEqual(await search('created_at:2024-05-01'), ['nest-api', 'zap', 'Nest']);
  assert.deepEqual(await search('created_at:2024-04-30'), ['OWASP Nest', 'snake_case']);
  assert.deepEqual(await search('created_at>2024-05-01'), ['100%-coverage']);
  assert.deepEqual(
    await search('updated_at:20240601'),
    expected((r) => ['Nest', 'nest-api', 'zap', 'say "hi"'].includes(r.name)),
  );
  assert.deepEqual(await search('created_at:2020-02-29'), ['back\\slash'], 'a leap day');
  assert.deepEqual(await search('updated_at:20240229'), ['back\\slash']);
  assert.deepEqual(await search('created_at<9999-12-31'), expected(ALL));
  assert.deepEqual(await search('created_at>9999-12-31'), []);
  assert.deepEqual(await search('created_at>=0001-01-01'), expected(ALL));
  assert.deepEqual(await search('created_at<0001-01-01'), []);
});

test('free text searches the name; terms combine with AND; a repeated term changes nothing', async () => {
  assert.deepEqual(await search('nest'), await search('name:nest'));
  assert.deepEqual(await search('owasp nest'), ['OWASP Nest']);
  assert.deepEqual(
    await search('NEST language:python'),
    expected((r) => /nest/i.test(r.name) && r.language === 'Python'),
  );
  assert.deepEqual(await search('"OWASP Nest"'), ['OWASP Nest']);
  assert.deepEqual(await search('"nest"'), []);
  assert.deepEqual(await search('nest nest NEST nest'), await search('nest'));
  assert.deepEqual(
    await search('language:java stars:>=10 archived:false created_at>=2023-01-01'),
    expected((r) => r.language.startsWith('Java') && r.stars >= 10 && !r.archived),
  );
});

test('an unknown field or an invalid value drops that condition only; the rest applies (200)', async () => {
  const cases: [string, (r: Repo) => boolean][] = [
    ['lang:python', ALL],
    ['foo:bar stars:>=100', (r) => r.stars >= 100],
    ['stars:lots language:python', (r) => r.language === 'Python'],
    ['stars:1e3 forks:abc name:zap', (r) => r.name === 'zap'],
    ['stars:1.5 contributors:>=10', (r) => r.contributors >= 10],
    ['created_at:2023-02-29 archived:true', (r) => r.archived],
    ['created_at:0000-01-01 name:nest', (r) => /nest/i.test(r.name)],
    ['updated_at:2024-13-01 updated_at>=2024-06-01', (r) => compareDay(r.updated_at, '>=', '2024-06-01')],
    ['archived:maybe stars:>100', (r) => r.stars > 100],
    ['name:>x language:go', (r) => r.language === 'Go'],
    ['archived=true name:snake', (r) => r.name.startsWith('snake')],
    [':x >5 name:nest', (r) => /nest/i.test(r.name)],
    ['level:lab country:india name:zap', (r) => r.name === 'zap'],
  ];
  for (const [q, keep] of cases) assert.deepEqual(await search(q), expected(keep), q);
});

test('q combines with organization_id and ordering', async () => {
  assert.deepEqual(await search('nest', { organization_id: 'owasp' }), ['nest-api', 'Nest']);
  assert.deepEqual(
    await search('archived:false', { organization_id: 'OCTO-ORG' }),
    expected((r) => r.owner === 'octo-org' && !r.archived),
  );
  assert.deepEqual(
    await search('stars:>=42', { organization_id: 'someone' }),
    expected((r) => r.owner === 'someone' && r.stars >= 42),
  );
  assert.deepEqual(await search('name:zap', { organization_id: 'octo-org' }), []);
  for (const ordering of ['created_at', '-updated_at', 'updated_at,-created_at']) {
    assert.deepEqual(
      await search('archived:false', { ordering }),
      expected((r) => !r.archived, ordering),
      ordering,
    );
  }
});

test('pagination of a search: pages, counts and a Link header that keeps q', async () => {
  const q = 'archived:false stars:>=0';
  const all = expected((r) => !r.archived);
  assert.equal(all.length, 7);
  await assertSearchPages(get, LIST, q, {}, all, {
    key: 'name',
    limit: 2,
    linkQ: 'q=archived%3Afalse+stars%3A%3E%3D0',
  });
});

searchContractTests(get, LIST, 'name', () => expected(ALL));

test('OpenAPI: q documents its grammar and the searchable fields', async () => {
  const q = await qParameter(get, LIST);
  assert.equal(q.in, 'query');
  assert.equal(q.schema.maxLength, 1000);
  for (const text of [
    'stars:>=100',
    'name:"OWASP Nest"',
    'YYYY-MM-DD',
    '`archived` (boolean)',
    '`created_at` (date)',
    '`language` (string)',
  ]) {
    assert.ok(q.description.includes(text), text);
  }
});
