// OGC API – Features under /ogc/ (issue 45, item 3), over HTTP on the bundled dataset with REST_AUTH=required: the
// landing page, conformance and API definition (public), the collections, their pages of items (`limit`, `bbox`,
// `next`, `numberMatched`, `numberReturned`, `timeStamp`) and single features (keyed, as /api/v0/), and GDAL's own
// client: `ogrinfo` (Debian's gdal-bin, installed by .ci/run) reads every chapter through the `next` links. Also the
// plain GeoJSON list's `numberMatched`/`numberReturned`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { buildTestApp, type TestApp } from './app.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { findProgram, run } from './process.ts';

const GEO = 'application/geo+json; charset=utf-8';
let t: TestApp;
let base: string;
let key: string;

interface Feature {
  type: 'Feature';
  id: string;
  geometry: { type: 'Point'; coordinates: [number, number] };
  properties: Record<string, unknown> & { key: string; latitude: number; longitude: number };
  links?: { rel: string; href: string; type: string }[];
}
interface Collection {
  type: 'FeatureCollection';
  features: Feature[];
  numberMatched: number;
  numberReturned: number;
  timeStamp: string;
  links: { rel: string; href: string; type: string }[];
}

before(async () => {
  t = await buildTestApp({ importBundled: true, env: { REST_AUTH: 'required' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const user = await upsertLocalUser(t.database.db, 'gis-user');
  const created = await createApiKey(t.database.db, user!.id, 'gis', new Date(Date.now() + 86_400_000));
  assert.ok(created.ok);
  key = created.rawKey;
});
after(() => t?.close());

const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(url.startsWith('http') ? url : `${base}${url}`, { headers: { 'x-api-key': key, ...headers } });

async function json<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const res = await get(url, headers);
  assert.equal(res.status, 200, `${url}: ${await res.clone().text()}`);
  return (await res.json()) as T;
}

/** Every record of a REST list (its GeoJSON, page by page through `Link`). */
async function restFeatures(url: string): Promise<Feature[]> {
  const features: Feature[] = [];
  let next: string | undefined = `${base}${url}`;
  while (next) {
    const res = await get(next);
    assert.equal(res.status, 200);
    features.push(...((await res.json()) as Collection).features);
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return features;
}

test('landing page, conformance and API definition: public, with the links a client follows', async () => {
  for (const url of ['/ogc', '/ogc/']) {
    const res = await fetch(`${base}${url}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const landing = (await res.json()) as { links: { rel: string; href: string; type: string }[] };
    const rels = new Map(landing.links.map((link) => [link.rel, link]));
    for (const rel of ['self', 'service-desc', 'conformance', 'data']) assert.ok(rels.has(rel), rel);
    assert.equal(rels.get('data')!.href, `${base}/ogc/collections`);
    assert.equal(rels.get('conformance')!.href, `${base}/ogc/conformance`);
  }
  const conformance = (await (await fetch(`${base}/ogc/conformance`)).json()) as { conformsTo: string[] };
  assert.deepEqual(conformance.conformsTo.sort(), [
    'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
    'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  ]);
  const api = await fetch(`${base}/ogc/api`);
  assert.equal(api.status, 200);
  assert.match(String(api.headers.get('content-type')), /^application\/vnd\.oai\.openapi\+json;version=3\.0/);
  const definition = (await api.json()) as { openapi: string; paths: Record<string, unknown> };
  assert.match(definition.openapi, /^3\.0\./);
  assert.ok(definition.paths['/collections/{collectionId}/items']);
  const refused = await fetch(`${base}/ogc/`, { headers: { accept: 'text/html' } });
  assert.equal(refused.status, 406);
  assert.match(((await refused.json()) as { errors: { msg: string }[] }).errors[0]!.msg, /application\/json/);
});

test('collections and items need the key as /api/v0/ does; the collections are chapters and events', async () => {
  for (const url of ['/ogc/collections', '/ogc/collections/chapters', '/ogc/collections/chapters/items'])
    assert.equal((await fetch(`${base}${url}`)).status, 401, url);
  const { collections } = await json<{ collections: { id: string; links: { rel: string; type: string }[] }[] }>(
    '/ogc/collections',
  );
  assert.deepEqual(
    collections.map((c) => c.id),
    ['chapters', 'events'],
  );
  for (const collection of collections)
    assert.ok(collection.links.some((link) => link.rel === 'items' && link.type === 'application/geo+json'));
  const unknown = await get('/ogc/collections/projects/items');
  assert.equal(unknown.status, 404);
  assert.deepEqual(await unknown.json(), { message: 'Collection not found' });
});

test('items: 10 by default, numberMatched of all, next links through every chapter; limit capped at 10,000', async () => {
  const rest = await restFeatures('/api/v0/chapters/?format=geojson');
  assert.equal(rest.length, 350, 'the bundled data has 350 placed chapters');
  const res = await get('/ogc/collections/chapters/items');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), GEO);
  const first = (await res.json()) as Collection;
  assert.equal(first.type, 'FeatureCollection');
  assert.equal(first.features.length, 10);
  assert.equal(first.numberReturned, 10);
  assert.equal(first.numberMatched, 350);
  assert.ok(Math.abs(Date.parse(first.timeStamp) - Date.now()) < 60_000, first.timeStamp);
  assert.match(first.timeStamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

  const seen: Feature[] = [];
  let next: string | undefined = '/ogc/collections/chapters/items?limit=100';
  let pages = 0;
  while (next) {
    const page: Collection = await json<Collection>(next);
    pages++;
    assert.equal(page.numberMatched, 350);
    assert.equal(page.numberReturned, page.features.length);
    seen.push(...page.features);
    next = page.links.find((link) => link.rel === 'next')?.href;
    if (next) assert.ok(next.startsWith(`${base}/ogc/collections/chapters/items?`), next);
  }
  assert.equal(pages, 4);
  assert.equal(new Set(seen.map((f) => f.id)).size, 350);
  const byKey = new Map(rest.map((f) => [f.properties.key, f]));
  for (const feature of seen) {
    const same = byKey.get(feature.id);
    assert.ok(same, feature.id);
    assert.deepEqual({ ...feature, id: undefined }, { ...same, id: undefined }, 'the list feature, with its id');
    assert.deepEqual(feature.geometry.coordinates, [feature.properties.longitude, feature.properties.latitude]);
  }
  const capped = await json<Collection>('/ogc/collections/chapters/items?limit=20000');
  assert.equal(capped.numberReturned, 350);
  for (const bad of ['limit=0', 'limit=ten', 'limit=-1', 'page=0', 'sort=name', 'bbox=1,2,3', 'bbox=0,10,5,5', 'f=xml'])
    assert.equal((await get(`/ogc/collections/chapters/items?${bad}`)).status, 400, bad);
});

test('bbox: the features inside, edges included, across the antimeridian too; next links keep it', async () => {
  const all = await restFeatures('/api/v0/chapters/?format=geojson');
  const inside = (w: number, s: number, e: number, n: number) =>
    all
      .filter(({ properties: p }) => p.latitude >= s && p.latitude <= n)
      .filter(({ properties: p }) =>
        w <= e ? p.longitude >= w && p.longitude <= e : p.longitude >= w || p.longitude <= e,
      )
      .map((f) => f.properties.key)
      .sort();
  for (const [w, s, e, n] of [
    [-10, 35, 30, 60],
    [170, -50, -170, 0],
    [-180, -90, 180, 90],
  ] as const) {
    const keys: string[] = [];
    let next: string | undefined = `/ogc/collections/chapters/items?bbox=${w},${s},${e},${n}&limit=7`;
    let matched = -1;
    while (next) {
      const page: Collection = await json<Collection>(next);
      matched = page.numberMatched;
      keys.push(...page.features.map((f) => f.id));
      next = page.links.find((link) => link.rel === 'next')?.href;
      if (next) assert.match(next, /bbox=/);
    }
    assert.deepEqual(keys.sort(), inside(w, s, e, n), `bbox ${w},${s},${e},${n}`);
    assert.equal(matched, keys.length);
  }
});

test('a single feature by its key: the item with links; 404 JSON for an unknown one; events are the upcoming ones', async () => {
  const page = await json<Collection>('/ogc/collections/chapters/items?limit=1');
  const one = page.features[0]!;
  const res = await get(`/ogc/collections/chapters/items/${encodeURIComponent(one.id)}`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), GEO);
  const feature = (await res.json()) as Feature;
  assert.deepEqual({ ...feature, links: undefined }, { ...one, links: undefined });
  assert.ok(feature.links!.some((link) => link.rel === 'self'));
  assert.ok(feature.links!.some((link) => link.rel === 'collection'));
  const missing = await get('/ogc/collections/chapters/items/no-such-chapter');
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { message: 'Feature not found' });

  const upcoming = await restFeatures('/api/v0/events/?format=geojson&is_upcoming=true');
  const events = await json<Collection>('/ogc/collections/events/items?limit=1000');
  assert.equal(events.numberMatched, upcoming.length);
  assert.deepEqual(events.features.map((f) => f.id).sort(), upcoming.map((f) => f.properties.key).sort());
  const upcomingKeys = new Set(upcoming.map((f) => f.properties.key));
  const past = (await restFeatures('/api/v0/events/?format=geojson')).find((f) => !upcomingKeys.has(f.properties.key));
  assert.ok(past, 'the bundled data has past events with coordinates');
  assert.equal((await get(`/ogc/collections/events/items/${past.properties.key}`)).status, 404, 'a past event');
});

test('the plain GeoJSON list says how many features it left out: numberMatched and numberReturned', async () => {
  const page = await json<Collection & { count: number }>('/api/v0/chapters/?format=geojson');
  assert.equal(page.numberMatched, 350);
  assert.equal(page.numberReturned, 100);
  assert.equal(page.count, 350, 'the fields clients read before stay');
  const last = await json<Collection>('/api/v0/chapters/?format=geojson&page=4');
  assert.equal(last.numberReturned, 50);
});

test('ogrinfo (GDAL): the summary counts 350 chapters; reading the layer follows next through all 350', async () => {
  const ogrinfo = findProgram(
    'ogrinfo',
    'ogrinfo not found: this test runs GDAL against /ogc/. Install it, e.g. `apt-get install gdal-bin` (what .ci/run does).',
    ['/usr/bin', ...(process.env.PATH ?? '').split(path.delimiter)],
  );
  const source = `OAPIF:${base}/ogc`;
  const header = ['--config', 'GDAL_HTTP_HEADERS', `X-API-Key: ${key}`];
  const summary = await run(ogrinfo, ['-ro', '-al', '-so', source, ...header], {});
  assert.equal(summary.code, 0, summary.stderr);
  assert.match(summary.stdout, /Layer name: chapters[\s\S]*?Geometry: Point[\s\S]*?Feature Count: 350/);
  assert.match(summary.stdout, /Layer name: events/);
  const read = await run(ogrinfo, ['-ro', source, 'chapters', ...header], {});
  assert.equal(read.code, 0, read.stderr);
  const keys = [...read.stdout.matchAll(/^ {2}key \(String\) = (.*)$/gm)].map((m) => m[1]);
  assert.equal(keys.length, 350, read.stderr);
  assert.equal(new Set(keys).size, 350);
  const keyless = await run(ogrinfo, ['-ro', '-so', source, 'chapters'], {});
  assert.notEqual(keyless.code, 0, 'without the key GDAL is refused');
});
