// `Accept: application/geo+json` on /api/v0/chapters/ and /events/ (issue 17, item 2): a FeatureCollection
// of Points with the same filters, orderings and pages as the JSON list, over the records that have
// coordinates; content negotiation (406), Vary, the response cache and ETags kept apart per media type.
// The list contract's own helpers (test/lists.ts) run on the GeoJSON answers through `geoGet`, which
// checks each feature and hands the helpers `{items: properties, ...page fields}`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import type { EventTable } from '../src/db/schema.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { chapter } from './factories.ts';
import { event, utcDate } from './factories-community.ts';
import { assertOrderings, assertPagination, bothWays, keysInOrder, type Get, type Response } from './lists.ts';

const GEO = 'application/geo+json';
let t: TestApp;
type Event = Selectable<EventTable> & { id: string };
const events: Event[] = [];
const chapters: {
  id: string;
  key: string;
  created_at: string;
  latitude: number;
  longitude: number;
  country: string;
}[] = [];

before(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  // Events with and without coordinates, past and upcoming, across categories; ties only the id breaks.
  const spec: [string, number, number | null, number | null, 'global' | 'partner' | 'other'][] = [
    ['past-placed', -10, 51.5, -0.12, 'global'],
    ['past-unplaced', -9, null, null, 'other'],
    ['soon-placed', 3, 40.4, -3.7, 'global'],
    ['soon-unplaced', 3, null, null, 'global'],
    ['later-placed', 20, -33.9, 151.2, 'partner'],
    ['later-half', 20, 10, null, 'partner'],
    ['latest-placed', 40, 35.7, 139.7, 'other'],
    ['same-place', 40, 35.7, 139.7, 'global'],
  ];
  for (const [key, start, latitude, longitude, category] of spec) {
    events.push(
      (await event(db, {
        key,
        name: key,
        start_date: utcDate(start),
        end_date: utcDate(start + 1),
        latitude,
        longitude,
        category,
      })) as Event,
    );
  }
  const countries = ['Germany', 'Germany', 'India', 'India', 'India', 'Brazil', 'Kenya'];
  for (const [i, country] of countries.entries()) {
    const id = await chapter(db, { country, latitude: -40 + i * 11.5, longitude: -120 + i * 33.25 });
    const row = await db.selectFrom('chapters').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    chapters.push({
      ...row,
      id: String(row.id),
      created_at: new Date(row.created_at).toISOString(),
      latitude: row.latitude!,
      longitude: row.longitude!,
    });
  }
  // An inactive chapter and one without coordinates are in neither representation.
  await chapter(db, { is_active: false, country: 'India' });
  await chapter(db, { country: 'India', latitude: null, longitude: null });
  // The writes moved the data version (each records its change): heard now, not at the app's next poll mid-test.
  await t.app.shared.watcher.refresh();
});

after(() => t?.close());

const request = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
const get: Get = (url) => request(url);

/** GET with `Accept: application/geo+json`; a 200 is checked as GeoJSON and read back as a JSON list page. */
const geoGet: Get = async (url) => {
  const res = await request(url, { accept: GEO });
  if (res.statusCode !== 200) return res;
  assert.equal(res.headers['content-type'], 'application/geo+json; charset=utf-8', url);
  // Compact, as the JSON list is: the database writes the features (geojson.ts).
  assert.equal(res.body, JSON.stringify(res.json()), url);
  const { type, features, numberMatched, numberReturned, ...members } = res.json() as {
    type: string;
    features: Feature[];
    numberMatched: number;
    numberReturned: number;
    count: number;
  };
  assert.equal(type, 'FeatureCollection', url);
  // OGC API – Features' names of the totals (issue 45): what a tool reading one page left out.
  assert.equal(numberMatched, members.count, url);
  assert.equal(numberReturned, features.length, url);
  for (const feature of features) {
    assert.deepEqual(Object.keys(feature), ['type', 'geometry', 'properties'], url);
    assert.equal(feature.type, 'Feature');
    // RFC 7946: longitude first.
    assert.deepEqual(
      feature.geometry,
      { type: 'Point', coordinates: [feature.properties.longitude, feature.properties.latitude] },
      url,
    );
    assert.equal(typeof feature.properties.longitude, 'number', url);
    assert.equal(typeof feature.properties.latitude, 'number', url);
  }
  const items = features.map((f) => f.properties);
  return {
    ...res,
    statusCode: res.statusCode,
    headers: res.headers,
    body: res.body,
    json: () => ({ items, ...members }),
  } as Response;
};

interface Feature {
  type: string;
  geometry: { type: string; coordinates: number[] };
  properties: Record<string, unknown> & { latitude: number; longitude: number };
}

const placed = (rows: Event[]) => rows.filter((e) => e.latitude !== null && e.longitude !== null);

/** Every page of `url` (limit 100 is enough here) as the items the JSON list gives, located ones only. */
async function jsonLocated(url: string): Promise<unknown[]> {
  const res = await get(url);
  assert.equal(res.statusCode, 200, res.body);
  return (res.json().items as { latitude: unknown; longitude: unknown }[]).filter(
    (i) => i.latitude !== null && i.longitude !== null,
  );
}

test('events: the features are the JSON items that have both coordinates, in the same order, for each filter and ordering', async () => {
  for (const query of [
    '',
    '?is_upcoming=true',
    '?category=global',
    '?category=global&category=partner&is_upcoming=true',
    '?latitude_gte=0',
    '?longitude_lte=0&ordering=-latitude',
    '?ordering=start_date',
    '?is_upcoming=true&ordering=-longitude,start_date',
  ]) {
    const url = `/api/v0/events/${query}`;
    const expected = await jsonLocated(url);
    const geo = (await geoGet(url)).json();
    assert.deepEqual(geo.items, expected, url);
    // Left out before paging: count is the number of features.
    assert.equal(geo.count, expected.length, url);
    assert.equal(geo.total_count, expected.length, url);
  }
  const all = (await geoGet('/api/v0/events/')).json();
  assert.deepEqual(Object.keys(all), [
    'items',
    'count',
    'total_count',
    'current_page',
    'total_pages',
    'has_next',
    'has_previous',
  ]);
  assert.equal(all.count, placed(events).length);
  assert.equal((await get('/api/v0/events/')).json().count, events.length, 'the JSON list still counts every event');
});

test('events: every ordering over the located events, ids breaking ties', async () => {
  await assertOrderings(geoGet, '/api/v0/events/', placed(events), [
    ...bothWays(['start_date', 'end_date', 'latitude', 'longitude']),
    '-latitude,longitude',
  ]);
});

test('events: pages, Link header and cursor of the GeoJSON list count located events only', async () => {
  await assertPagination(geoGet, '/api/v0/events/', keysInOrder(placed(events), '-start_date,-end_date', 'key'), {
    limit: 2,
  });
});

test('chapters: GeoJSON with the country filter, q, ordering and pages; records without coordinates or inactive left out', async () => {
  for (const query of [
    '',
    '?country=IN',
    '?country=germany&ordering=latitude',
    '?q=country:Brazil',
    '?ordering=-longitude',
  ]) {
    const url = `/api/v0/chapters/${query}`;
    const json = (await get(url)).json();
    const geo = (await geoGet(url)).json();
    assert.deepEqual(geo.items, json.items, url);
    assert.equal(geo.count, json.count, url);
  }
  assert.equal((await geoGet('/api/v0/chapters/')).json().count, chapters.length);
  assert.equal((await geoGet('/api/v0/chapters/?country=India')).json().count, 3);
  await assertPagination(geoGet, '/api/v0/chapters/', keysInOrder(chapters, '-created_at', 'key'), { limit: 2 });
});

test('Accept: JSON by default and for */*, GeoJSON when preferred, 406 with our error body when neither is allowed', async () => {
  const cases: [string | undefined, string | 406][] = [
    [undefined, 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['application/json, */*', 'json'],
    ['application/json, text/plain, */*', 'json'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
    ['application/*', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['not a media type', 'json'],
    ['application/geo+json', 'geo'],
    ['APPLICATION/GEO+JSON', 'geo'],
    ['application/geo+json, */*', 'geo'],
    ['application/geo+json, application/json;q=0.9', 'geo'],
    ['application/json;q=0.5, application/geo+json', 'geo'],
    ['application/json;q=0, */*', 'geo'],
    ['application/geo+json;q=0.4, */*;q=0.5', 'json'],
    ['text/html', 406],
    ['application/xml, image/*', 406],
    ['application/json;q=0', 406],
    ['application/geo+json;q=0, application/json;q=0', 406],
    ['image/*;q=1', 406],
  ];
  // Every list also offers CSV (test/csv.test.ts), events iCalendar (test/calendar.test.ts): the 406 names them.
  const offered: Record<string, string> = {
    '/api/v0/chapters/': 'application/json, application/geo+json, text/csv',
    '/api/v0/events/': 'application/json, application/geo+json, text/csv, text/calendar',
  };
  for (const path of ['/api/v0/chapters/', '/api/v0/events/']) {
    for (const [accept, expected] of cases) {
      const res = await request(path, accept === undefined ? {} : { accept });
      const label = `${path} Accept: ${accept}`;
      assert.match(String(res.headers.vary), /(^|, )Accept(,|$)/, label);
      if (expected === 406) {
        assert.equal(res.statusCode, 406, label);
        assert.match(String(res.headers['content-type']), /^application\/json/, label);
        assert.deepEqual(
          res.json(),
          {
            message: 'Not acceptable',
            errors: [{ loc: ['header', 'accept'], msg: `must allow one of: ${offered[path]}` }],
          },
          label,
        );
        assert.ok(res.headers['ratelimit-limit'], label);
        continue;
      }
      assert.equal(res.statusCode, 200, `${label}: ${res.body.slice(0, 200)}`);
      const body = res.json();
      if (expected === 'json') {
        assert.match(String(res.headers['content-type']), /^application\/json; charset=utf-8$/, label);
        assert.ok(Array.isArray(body.items), label);
      } else {
        assert.equal(res.headers['content-type'], 'application/geo+json; charset=utf-8', label);
        assert.equal(body.type, 'FeatureCollection', label);
      }
    }
  }
  // The other lists offer JSON and CSV, no GeoJSON; a detail answers JSON only: an Accept without it is 406 (issue 45).
  assert.equal((await request('/api/v0/committees/', { accept: GEO })).statusCode, 406);
  const detail = await request(`/api/v0/chapters/${chapters[0]!.key}`, { accept: 'text/html' });
  assert.equal(detail.statusCode, 406);
  assert.equal(detail.json().errors[0].msg, 'must allow one of: application/json');
  const plain = await request(`/api/v0/chapters/${chapters[0]!.key}`, { accept: 'text/html, */*;q=0.1' });
  assert.equal(plain.statusCode, 200);
  assert.equal(plain.headers.vary, 'Origin, X-API-Key');
  // A bad query is still a 400 first; a bad page with GeoJSON too.
  assert.equal((await request('/api/v0/events/?page=0', { accept: GEO })).statusCode, 400);
});

test('the response cache keeps JSON and GeoJSON apart; ETags differ, and If-None-Match only matches its own representation', async () => {
  const url = '/api/v0/events/?category=global&limit=5';
  const json1 = await request(url);
  assert.equal(json1.headers['x-cache'], 'MISS');
  const geo1 = await request(url, { accept: GEO });
  assert.equal(geo1.headers['x-cache'], 'MISS', 'a cached JSON answer is not served to a GeoJSON request');
  assert.equal(geo1.json().type, 'FeatureCollection');
  const geo2 = await request(url, { accept: GEO });
  assert.equal(geo2.headers['x-cache'], 'HIT');
  assert.equal(geo2.headers['content-type'], 'application/geo+json; charset=utf-8');
  assert.equal(geo2.body, geo1.body);
  assert.equal(geo2.headers.link, geo1.headers.link);
  for (const accept of [undefined, '*/*', 'application/json, */*']) {
    const json2 = await request(url, accept ? { accept } : {});
    assert.equal(json2.headers['x-cache'], 'HIT', String(accept));
    assert.match(String(json2.headers['content-type']), /^application\/json/);
    assert.equal(json2.body, json1.body, 'a cached GeoJSON answer is not served to a JSON request');
  }
  for (const res of [json1, geo1, geo2]) assert.equal(res.headers.vary, 'Origin, X-API-Key, Accept');

  assert.notEqual(geo1.headers.etag, json1.headers.etag);
  const conditional = async (etag: unknown, accept?: string) =>
    (await request(url, { 'if-none-match': String(etag), ...(accept ? { accept } : {}) })).statusCode;
  assert.equal(await conditional(json1.headers.etag), 304);
  assert.equal(await conditional(geo1.headers.etag, GEO), 304);
  assert.equal(await conditional(json1.headers.etag, GEO), 200);
  assert.equal(await conditional(geo1.headers.etag), 200);
  // The same holds for answers that are built, not cached (a URL seen the first time).
  const fresh = '/api/v0/chapters/?limit=3';
  const geoFresh = await request(fresh, { accept: GEO, 'if-none-match': String(geo1.headers.etag) });
  assert.equal(geoFresh.headers['x-cache'], 'MISS');
  assert.equal(geoFresh.statusCode, 200);
  assert.equal((await request(fresh, { 'if-none-match': String(geoFresh.headers.etag) })).statusCode, 200);
  assert.equal((await request(fresh, { accept: GEO, 'if-none-match': String(geoFresh.headers.etag) })).statusCode, 304);
});

test('format=geojson: GeoJSON whatever Accept says (GIS tools such as GDAL send their own), with its own cache entry and Link', async () => {
  for (const path of ['/api/v0/chapters/?limit=3', '/api/v0/events/?is_upcoming=true']) {
    const byAccept = await request(path, { accept: GEO });
    for (const accept of [undefined, 'application/json, */*', 'text/csv', 'text/html']) {
      const res = await request(`${path}&format=geojson`, accept ? { accept } : {});
      assert.equal(res.statusCode, 200, `${path} ${accept}: ${res.body}`);
      assert.equal(res.headers['content-type'], 'application/geo+json; charset=utf-8');
      assert.equal(res.body, byAccept.body, `${path} ${accept}`);
      assert.match(String(res.headers.link), /format=geojson/);
    }
    // format=json wins over an Accept of GeoJSON alike.
    const json = await request(`${path}&format=json`, { accept: GEO });
    assert.match(String(json.headers['content-type']), /^application\/json/);
  }
});

test('HEAD with Accept: application/geo+json answers like GET, without a body', async () => {
  const res = await t.app.inject({ method: 'HEAD', url: '/api/v0/chapters/', headers: { accept: GEO } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/geo+json; charset=utf-8');
  assert.equal(res.body, '');
});

test('the OpenAPI document gives the GeoJSON media type of the two lists, and their 406 with the headers a real 406 carries', async () => {
  const doc = (await request('/api/v0/openapi.json')).json();
  for (const [path, name, more] of [
    ['/api/v0/chapters/', 'Chapter', []],
    ['/api/v0/events/', 'Event', ['text/calendar']],
  ] as const) {
    const responses = doc.paths[path].get.responses;
    assert.deepEqual(Object.keys(responses['200'].content), ['application/json', GEO, 'text/csv', ...more], path);
    assert.equal(responses['200'].content[GEO].schema.$ref, `#/components/schemas/${name}FeatureCollection`);
    assert.ok(responses['406'], `${path}: 406 documented`);
    const refused = await request(path, { accept: 'text/html' });
    assert.equal(refused.statusCode, 406);
    for (const header of Object.keys(responses['406'].headers))
      assert.ok(refused.headers[header.toLowerCase()], `406 lacks ${header}`);
  }
  const feature = doc.components.schemas.ChapterFeature;
  assert.deepEqual(feature.properties.properties, { $ref: '#/components/schemas/Chapter' });
  assert.ok(doc.paths['/api/v0/committees/'].get.responses['406']);
  assert.deepEqual(Object.keys(doc.paths['/api/v0/committees/'].get.responses['200'].content), [
    'application/json',
    'text/csv',
  ]);
});
