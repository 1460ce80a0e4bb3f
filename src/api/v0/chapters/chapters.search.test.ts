// Structured search `q` on the chapters list, through HTTP: name, country and region (strings), with
// the country and coordinate filters, ordering and pagination. Only active chapters with both
// coordinates are ever listed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chapter } from '../../../../test/factories.ts';
import { assertSearchPages, qParameter, searchContractTests, searchUrl } from '../../../../test/factories-search.ts';
import { keysInOrder, keysOf } from '../../../../test/lists.ts';
import { useTestApp } from '../../../../test/resources.ts';

interface Chapter {
  id: string;
  key: string;
  name: string;
  country: string;
  region: string;
  latitude: number;
  longitude: number;
  created_at: Date;
  updated_at: Date;
}
const listed: Chapter[] = [];

// [key, name, country, region, latitude, longitude]
const SPECS = [
  ['london', 'OWASP London', 'United Kingdom', 'Europe', 51.5, -0.1],
  ['nyc', 'OWASP New York City', 'United States', 'North America', 40.7, -74],
  ['bay-area', 'OWASP Bay Area', 'United States', 'North America', 37.7, -122.4],
  ['na-virtual', 'OWASP North America Virtual', 'United States', 'North America', 39, -98],
  ['bangalore', 'OWASP Bangalore', 'India', 'Asia', 12.9, 77.6],
  ['sao-paulo', 'OWASP São Paulo', 'Brazil', 'South America', -23.5, -46.6],
  ['latam', 'OWASP Latin America', '', 'South America', -15, -60],
  ['remote', 'OWASP 100% Remote', '', '', 0, 0],
  ['under', 'OWASP Under_score', 'Germany', 'Europe', 52.5, 13.4],
  ['underx', 'OWASP UnderXscore', 'Germany', 'Europe', 48.1, 11.6],
] as const;

const { get } = useTestApp(async (db) => {
  for (const [i, [key, name, country, region, latitude, longitude]] of SPECS.entries()) {
    const created_at = new Date(Date.UTC(2024, 0, 1 + i));
    const updated_at = new Date(Date.UTC(2024, 6, 20 - i));
    const id = await chapter(db, {
      key,
      name,
      country,
      region,
      latitude,
      longitude,
      created_at: created_at.toISOString(),
      updated_at: updated_at.toISOString(),
    });
    listed.push({ id, key, name, country, region, latitude, longitude, created_at, updated_at });
  }
  // Matching but never listed: inactive, or without coordinates.
  await chapter(db, {
    key: 'london-old',
    name: 'OWASP London Old',
    country: 'United Kingdom',
    region: 'Europe',
    is_active: false,
  });
  await chapter(db, {
    key: 'london-east',
    name: 'OWASP London East',
    country: 'United Kingdom',
    region: 'Europe',
    latitude: null,
  });
});

const PATH = '/api/v0/chapters/';
const search = (q: string, params: Record<string, string> = {}) => keysOf(get, searchUrl(PATH, q, params), 'key');
const expected = (keep: (c: Chapter) => boolean, ordering = '-created_at') =>
  keysInOrder(listed.filter(keep), ordering, 'key');
const ALL = () => true;

test('name: substring ignoring case, exact when quoted; hidden chapters never match', async () => {
  assert.deepEqual(await search('name:london'), ['london']);
  assert.deepEqual(await search('name:LONDON'), ['london']);
  assert.deepEqual(await search('name:"OWASP London"'), ['london']);
  assert.deepEqual(await search('name:"owasp london"'), []);
  assert.deepEqual(await search('name:"London"'), [], 'quoted is not a substring');
  assert.deepEqual(
    await search('name:america'),
    expected((c) => /america/i.test(c.name)),
  );
  assert.deepEqual(await search('name:são'), ['sao-paulo']);
  assert.deepEqual(await search('name:100%'), ['remote']);
  assert.deepEqual(await search('name:r_s'), ['under'], 'not UnderXscore');
  assert.deepEqual(await search('name:tokyo'), []);
});

test('country: substring ignoring case, exact when quoted', async () => {
  assert.deepEqual(
    await search('country:united'),
    expected((c) => c.country.startsWith('United')),
  );
  assert.deepEqual(await search('country:KINGDOM'), ['london']);
  assert.deepEqual(
    await search('country:"United States"'),
    expected((c) => c.country === 'United States'),
  );
  assert.deepEqual(await search('country:"united states"'), []);
  assert.deepEqual(await search('country:"India"'), ['bangalore']);
  assert.deepEqual(await search('country:"Ind"'), []);
  assert.deepEqual(await search('country:japan'), []);
});

test('region: substring ignoring case, exact when quoted; multi-word values need quotes', async () => {
  for (const [query, match] of [
    ['region:europe', (c) => c.region === 'Europe'],
    ['region:america', (c) => c.region.endsWith('America')],
    ['region:"North America"', (c) => c.region === 'North America'],
  ] satisfies [string, Parameters<typeof expected>[0]][]) {
    assert.deepEqual(await search(query), expected(match), query);
  }
  assert.deepEqual(await search('region:"America"'), []);
  // Unquoted, `america` is free text on the name: region has "north" and name has "america".
  assert.deepEqual(await search('region:north america'), ['na-virtual']);
  assert.deepEqual(await search('region:antarctica'), []);
});

test('free text searches the name; terms combine with AND; fields of other resources are dropped', async () => {
  assert.deepEqual(await search('bay'), ['bay-area']);
  assert.deepEqual(await search('owasp america region:south'), ['latam']);
  assert.deepEqual(await search('"OWASP Bangalore"'), ['bangalore']);
  assert.deepEqual(await search('country:united region:europe'), ['london']);
  for (const q of [
    'stars:>1',
    'created_at:2024-01-01',
    'updated_at>2030-01-01',
    'level:lab',
    'archived:true',
    'language:go',
  ]) {
    assert.deepEqual(await search(q), expected(ALL), q);
  }
  assert.deepEqual(
    await search('created_at:2024-01-01 country:germany foo:bar'),
    expected((c) => c.country === 'Germany'),
  );
  assert.deepEqual(
    await search('country:>x region:asia'),
    ['bangalore'],
    'an operator on a string drops that condition',
  );
});

test('q combines with the country and coordinate filters, ordering and pagination', async () => {
  assert.deepEqual(await search('bay', { country: 'united states' }), ['bay-area']);
  assert.deepEqual(
    await search('region:europe', { country: 'Germany' }),
    expected((c) => c.country === 'Germany'),
  );
  assert.deepEqual(await search('name:london', { country: 'Germany' }), []);
  assert.deepEqual(
    await search('region:america', { latitude_gte: '0' }),
    expected((c) => c.region.endsWith('America') && c.latitude >= 0),
  );
  assert.deepEqual(
    await search('owasp', { longitude_lte: '-50', latitude_lte: '40' }),
    expected((c) => c.longitude <= -50 && c.latitude <= 40),
  );
  for (const ordering of ['latitude', '-longitude', 'updated_at', 'created_at']) {
    assert.deepEqual(
      await search('region:america', { ordering }),
      expected((c) => c.region.endsWith('America'), ordering),
      ordering,
    );
  }
  const all = expected((c) => /e/i.test(c.region), 'latitude');
  assert.equal(all.length, 8);
  await assertSearchPages(get, PATH, 'region:e', { ordering: 'latitude' }, all, {
    key: 'key',
    limit: 3,
    linkQ: 'q=region%3Ae',
  });
});

searchContractTests(get, PATH, 'key', () => expected(ALL));

test('OpenAPI: q documents its grammar and the searchable fields', async () => {
  const q = await qParameter(get, PATH);
  assert.equal(q.schema.maxLength, 1000);
  assert.ok(q.description.includes('`country` (string), `region` (string)'), q.description);
});
