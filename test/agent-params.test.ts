// The list parameters for agents and bots (issue 27, items 1–3), through HTTP on the bundled data plus a few
// synthetic places: `near`/`radius_km` on chapters and events (nearest first, `distance_km`, counts within the
// radius, the cursor, GeoJSON), `group_by` on the lists (sums, nulls, each group equal to the list filtered by it,
// cached and invalidated), `fields` on lists and details, and every bad input and abuse case as a 400.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { chapter } from './factories.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';

let t: TestApp;

interface Answer {
  status: number;
  body: Record<string, unknown> & { items?: Record<string, unknown>[] };
  headers: Record<string, string | string[] | number | undefined>;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await t.app.inject({ url, headers });
  return { status: res.statusCode, body: res.json() as Answer['body'], headers: res.headers };
}

async function ok(url: string, headers: Record<string, string> = {}): Promise<Answer['body']> {
  const answer = await get(url, headers);
  assert.equal(answer.status, 200, `${url}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Great-circle distance in km, computed here independently of the service. */
function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const h =
    Math.sin(((lat2 - lat1) * rad) / 2) ** 2 +
    Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.sqrt(h));
}

/** Every item of a list, walked with the cursor of the `next` links. */
async function walk(url: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let next: string | undefined = url;
  while (next) {
    const answer = await get(next);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    items.push(...answer.body.items!);
    next = /<([^>]*)>; rel="next"/.exec(String(answer.headers.link ?? ''))?.[1];
  }
  return items;
}

const AMSTERDAM = '52.37,4.90';

before(async () => {
  t = await buildTestApp({ importBundled: true });
  // Places the bundled chapters lack: on both sides of the antimeridian and near the pole, without a country.
  for (const [key, latitude, longitude] of [
    ['date-line-east', 0.5, 179.9],
    ['date-line-west', 0.5, -179.9],
    ['polar', 89.5, 10],
  ] as const) {
    await chapter(t.database.db, { key, name: key, latitude, longitude, country: '' });
  }
  // The writes moved the data version (each records its change): heard now, not at the app's next poll mid-test.
  await t.app.shared.watcher.refresh();
});
after(() => t.close());

test('near: chapters nearest first with their great-circle distance; the nearest to Amsterdam is the Netherlands chapter', async () => {
  const body = await ok(`/api/v0/chapters/?near=${AMSTERDAM}&limit=20`);
  const items = body.items!;
  assert.equal(items[0]!.key, 'netherlands');
  const all = await ok('/api/v0/chapters/?limit=1');
  assert.equal(body.count, all.count, 'without a radius, count is every chapter with coordinates');
  let previous = -1;
  for (const item of items) {
    const expected = haversine(52.37, 4.9, item.latitude as number, item.longitude as number);
    assert.ok(
      Math.abs((item.distance_km as number) - expected) <= 0.051,
      `${String(item.key)}: ${String(item.distance_km)} vs ${expected}`,
    );
    assert.ok((item.distance_km as number) >= previous, 'nearest first');
    previous = item.distance_km as number;
  }
  // The item keeps its fields, distance_km last.
  assert.deepEqual(Object.keys(items[0]!), [
    'key',
    'name',
    'latitude',
    'longitude',
    'created_at',
    'updated_at',
    'distance_km',
  ]);
  // `ordering=distance` is the same list.
  assert.deepEqual((await ok(`/api/v0/chapters/?near=${AMSTERDAM}&limit=20&ordering=distance`)).items, items);
});

test('near: across the antimeridian and near the pole, distances are great-circle', async () => {
  const east = await ok('/api/v0/chapters/?near=0.5,179.95&limit=2&fields=key,distance_km');
  assert.deepEqual(
    east.items!.map((i) => i.key).sort(),
    ['date-line-east', 'date-line-west'],
    'the chapter 0.15° away across the date line is as near as the one on this side',
  );
  assert.deepEqual(
    east.items!.map((i) => i.distance_km),
    [haversine(0.5, 179.95, 0.5, 179.9), haversine(0.5, 179.95, 0.5, -179.9)].map((d) => Math.round(d * 10) / 10),
  );
  const pole = await ok('/api/v0/chapters/?near=89.9,-170&limit=1&fields=key,distance_km');
  assert.equal(pole.items![0]!.key, 'polar');
  assert.ok(Math.abs((pole.items![0]!.distance_km as number) - haversine(89.9, -170, 89.5, 10)) <= 0.051);
});

test('radius_km: count is the number within the radius, every page walked by cursor is within it and in order', async () => {
  const every = (await walk('/api/v0/chapters/?limit=100&fields=key,latitude,longitude')) as {
    key: string;
    latitude: number;
    longitude: number;
  }[];
  const within = every
    .map((c) => ({ key: c.key, d: haversine(52.37, 4.9, c.latitude, c.longitude) }))
    .filter((c) => c.d <= 800);
  assert.ok(within.length > 10, 'enough chapters for several pages');
  const first = await ok(`/api/v0/chapters/?near=${AMSTERDAM}&radius_km=800&limit=4`);
  assert.equal(first.count, within.length);
  const walked = await walk(`/api/v0/chapters/?near=${AMSTERDAM}&radius_km=800&limit=4&fields=key,distance_km`);
  assert.deepEqual(walked.map((i) => i.key).sort(), within.map((c) => c.key).sort());
  const distances = walked.map((i) => i.distance_km as number);
  assert.deepEqual(
    distances,
    [...distances].sort((a, b) => a - b),
  );
  // Page numbers reach the same records as the cursor.
  const third = await ok(`/api/v0/chapters/?near=${AMSTERDAM}&radius_km=800&limit=4&page=3&fields=key,distance_km`);
  assert.deepEqual(third.items, walked.slice(8, 12));
  // Other filters still apply, and other orderings may replace the distance.
  const german = await ok(`/api/v0/chapters/?near=${AMSTERDAM}&radius_km=800&country=DE&limit=100&fields=key`);
  assert.ok((german.count as number) < within.length && (german.count as number) > 0);
  const byDate = await ok(`/api/v0/chapters/?near=${AMSTERDAM}&radius_km=800&ordering=created_at&limit=100`);
  const dates = byDate.items!.map((i) => i.created_at as string);
  assert.deepEqual(dates, [...dates].sort());
  assert.ok(byDate.items!.every((i) => typeof i.distance_km === 'number'));
});

test('near on GeoJSON: features nearest first with distance_km in their properties', async () => {
  const body = await ok(`/api/v0/chapters/?near=${AMSTERDAM}&radius_km=300&fields=key,distance_km`, {
    accept: 'application/geo+json',
  });
  const features = body.features as { geometry: { coordinates: number[] }; properties: Record<string, unknown> }[];
  assert.equal(body.count, features.length);
  assert.equal(features[0]!.properties.key, 'netherlands');
  assert.deepEqual(Object.keys(features[0]!.properties), ['key', 'distance_km']);
  const [lon, lat] = features[1]!.geometry.coordinates as [number, number];
  assert.ok(Math.abs((features[1]!.properties.distance_km as number) - haversine(52.37, 4.9, lat, lon)) <= 0.051);
});

test('near on events: upcoming events near Vienna, with the other filters', async () => {
  const body = await ok('/api/v0/events/?near=48.21,16.37&radius_km=50&is_upcoming=true');
  const items = body.items!;
  assert.ok(items.length > 0, 'the bundled data has upcoming events in Vienna');
  assert.ok(items.every((i) => (i.distance_km as number) <= 50 && /vienna/i.test(String(i.name))));
  // Events without coordinates are left out of a `near` list; with a radius around the whole Earth, count = placed.
  const placed = await ok('/api/v0/events/?near=0,0&radius_km=20016&limit=1');
  const everything = await walk('/api/v0/events/?limit=100&fields=latitude,longitude');
  assert.equal(placed.count, everything.filter((e) => e.latitude !== null && e.longitude !== null).length);
  const category = await ok('/api/v0/events/?near=48.21,16.37&category=global&limit=100&fields=key');
  const global = await ok('/api/v0/events/?category=global&limit=1');
  assert.ok((category.count as number) <= (global.count as number));
});

test('near and radius_km: every malformed or out-of-range value is a 400 that names the parameter', async () => {
  const cases: [string, string][] = [
    ['near=91,0', 'near'],
    ['near=-90.5,0', 'near'],
    ['near=0,181', 'near'],
    ['near=0,-180.01', 'near'],
    ['near=abc', 'near'],
    ['near=1,2,3', 'near'],
    ['near=52.37', 'near'],
    ['near=52.37;4.9', 'near'],
    ['near=1e2,4', 'near'],
    ['near=NaN,4', 'near'],
    [`near=${'9'.repeat(400)},1`, 'near'],
    [`near=${AMSTERDAM}&radius_km=0`, 'radius_km'],
    [`near=${AMSTERDAM}&radius_km=-5`, 'radius_km'],
    [`near=${AMSTERDAM}&radius_km=abc`, 'radius_km'],
    [`near=${AMSTERDAM}&radius_km=30000`, 'radius_km'],
    ['radius_km=10', 'radius_km'],
    ['ordering=distance', 'ordering'],
    [`near=${AMSTERDAM}&ordering=distance,created_at`, 'ordering'],
    [`near=${AMSTERDAM}&ordering=-distance`, 'ordering'],
    ['fields=key,distance_km', 'fields'],
  ];
  for (const [query, parameter] of cases) {
    for (const list of ['chapters', 'events']) {
      const answer = await get(`/api/v0/${list}/?${query}`);
      assert.equal(answer.status, 400, `${list} ${query}: ${JSON.stringify(answer.body)}`);
      const errors = answer.body.errors as { loc: string[] }[];
      assert.ok(
        errors.some((e) => e.loc.includes(parameter)),
        `${list} ${query}: ${JSON.stringify(answer.body)}`,
      );
    }
  }
  // Lists without places have no `near`: an unknown parameter there, ignored as every unknown parameter is.
  const projects = await ok(`/api/v0/projects/?near=${AMSTERDAM}&limit=1`);
  assert.equal(projects.items![0]!.distance_km, undefined);
});

test('group_by: the groups add up to the count, each equal to the list filtered by its value, by count then value', async () => {
  const levels = await ok('/api/v0/projects/?group_by=level');
  const all = await ok('/api/v0/projects/?limit=1');
  const groups = levels.groups as { value: string | null; count: number }[];
  assert.equal(levels.group_by, 'level');
  assert.equal(levels.count, all.count);
  assert.equal(
    groups.reduce((sum, g) => sum + g.count, 0),
    all.count,
  );
  for (const group of groups) {
    assert.equal((await ok(`/api/v0/projects/?level=${group.value}&limit=1`)).count, group.count, String(group.value));
  }
  for (let i = 1; i < groups.length; i++) {
    const [a, b] = [groups[i - 1]!, groups[i]!];
    assert.ok(a.count > b.count || (a.count === b.count && String(a.value) < String(b.value)), 'by count, then value');
  }
  // The same filters as the list.
  const flagshipTypes = await ok('/api/v0/projects/?group_by=type&level=flagship');
  assert.equal(flagshipTypes.count, (await ok('/api/v0/projects/?level=flagship&limit=1')).count);
});

test('group_by: records without a value are the null group; booleans and GitHub records group too', async () => {
  const countries = await ok('/api/v0/chapters/?group_by=country');
  const groups = countries.groups as { value: string | null; count: number }[];
  assert.deepEqual(
    groups.find((g) => g.value === null),
    { value: null, count: 3 },
    'the three synthetic chapters',
  );
  assert.equal(groups.find((g) => g.value === '')?.count, undefined, 'empty text is no value');
  assert.equal(
    groups.reduce((sum, g) => sum + g.count, 0),
    countries.count,
  );

  const sponsors = await ok('/api/v0/sponsors/?group_by=is_member');
  for (const group of sponsors.groups as { value: boolean; count: number }[]) {
    assert.equal(typeof group.value, 'boolean');
    assert.equal((await ok(`/api/v0/sponsors/?is_member=${group.value}&limit=1`)).count, group.count);
  }

  for (const field of ['state', 'organization', 'repository']) {
    const issues = await ok(`/api/v0/issues/?group_by=${field}`);
    const total = (await ok('/api/v0/issues/?limit=1')).count;
    const list = issues.groups as { value: string; count: number }[];
    assert.equal(issues.count, total);
    assert.equal(
      list.reduce((sum, g) => sum + g.count, 0),
      total,
    );
    const first = list[0]!;
    const filter =
      field === 'repository'
        ? `organization=${first.value.split('/')[0]}&repository=${first.value.split('/')[1]}`
        : `${field}=${first.value}`;
    assert.equal((await ok(`/api/v0/issues/?${filter}&limit=1`)).count, first.count, `${field}: ${first.value}`);
  }
  // With near and a radius: the groups of the places within it.
  const near = await ok(`/api/v0/chapters/?group_by=country&near=${AMSTERDAM}&radius_km=500`);
  assert.equal(near.count, (await ok(`/api/v0/chapters/?near=${AMSTERDAM}&radius_km=500&limit=1`)).count);
});

test('group_by: on every list that declares facets; anything else, a secret column included, is a 400', async () => {
  for (const [list, field] of [
    ['chapters', 'region'],
    ['events', 'category'],
    ['members', 'company'],
    ['organizations', 'location'],
    ['repositories', 'language'],
    ['repositories', 'organization'],
    ['milestones', 'state'],
    ['releases', 'repository'],
    ['labels', 'organization'],
    ['deleted', 'resource'],
    ['sponsors', 'sponsor_type'],
    ['sponsors', 'member_type'],
  ]) {
    const body = await ok(`/api/v0/${list}/?group_by=${field}`);
    const groups = body.groups as { count: number }[];
    assert.equal(
      groups.reduce((sum, g) => sum + g.count, 0),
      body.count,
      `${list} ${field}`,
    );
  }
  // The sub-lists of a snapshot group as their resource's list does.
  const snapshot = (await ok('/api/v0/snapshots/?limit=1')).items![0]!.key as string;
  for (const [segment, field] of [
    ['chapters', 'country'],
    ['issues', 'state'],
    ['projects', 'level'],
  ]) {
    const body = await ok(`/api/v0/snapshots/${snapshot}/${segment}/?group_by=${field}`);
    const listed = await ok(`/api/v0/snapshots/${snapshot}/${segment}/?limit=1`);
    assert.equal(body.count, listed.count, `${segment} ${field}`);
  }
  for (const query of [
    'group_by=key_digest',
    'group_by=email',
    'group_by=id',
    'group_by=latitude',
    'group_by=country%3Bselect%201',
    'group_by=level&cursor=abc',
    'group_by=level&fields=key',
    `group_by=${'x'.repeat(5000)}`,
  ]) {
    const answer = await get(`/api/v0/projects/?${query}`);
    assert.equal(answer.status, 400, `${query}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.message, 'Invalid request');
  }
  assert.equal((await get('/api/v0/members/?group_by=email')).status, 400);
  assert.equal(
    (await get('/api/v0/chapters/?group_by=country', { accept: 'application/geo+json' })).status,
    400,
    'GeoJSON has no groups',
  );
});

test('group_by: cached like counts, and counted again when the data changes', async () => {
  const url = '/api/v0/projects/?group_by=type';
  const before = await ok(url);
  const second = await get(url);
  assert.equal(second.headers['x-cache'], 'HIT');
  const db = t.database.db;
  const { rows } = await sql<{ key: string; type: string }>`
    update projects set type = 'tool', updated_at = now()
    where id = (select id from projects where is_active and type <> 'tool' order by id limit 1)
    returning key, type`.execute(db);
  assert.equal(rows.length, 1);
  t.app.shared.watcher.set(await bumpDataVersion(db));
  const afterChange = await ok(url);
  const tool = (body: typeof before) =>
    (body.groups as { value: string; count: number }[]).find((g) => g.value === 'tool')?.count ?? 0;
  assert.equal(tool(afterChange), tool(before) + 1);
  assert.equal(afterChange.count, before.count);
});

test('fields: only the named fields, in the schema order, on lists, details and GeoJSON; cached apart', async () => {
  const picked = await ok('/api/v0/chapters/?fields=name,key&limit=3');
  for (const item of picked.items!) assert.deepEqual(Object.keys(item), ['key', 'name']);
  const whole = await ok('/api/v0/chapters/?limit=3');
  assert.deepEqual(
    picked.items,
    whole.items!.map((i) => ({ key: i.key, name: i.name })),
  );
  assert.equal(picked.count, whole.count);
  // A repeated name counts once; blanks between commas are ignored.
  assert.deepEqual((await ok('/api/v0/chapters/?fields=key,,key,%20name&limit=3')).items, picked.items);
  const again = await get('/api/v0/chapters/?fields=name,key&limit=3');
  assert.equal(again.headers['x-cache'], 'HIT');
  assert.deepEqual(again.body.items, picked.items);

  const london = await ok('/api/v0/chapters/london?fields=leaders,name');
  const full = await ok('/api/v0/chapters/london');
  assert.deepEqual(london, { name: full.name, leaders: full.leaders });
  const dated = await ok('/api/v0/chapters/london?fields=updated_at');
  assert.deepEqual(dated, { updated_at: full.updated_at });

  for (const [list, names] of [
    ['issues', 'title,state'],
    ['projects', 'key,level'],
    ['members', 'login'],
    ['repositories', 'name'],
    ['events', 'key,start_date'],
    ['sponsors', 'name'],
  ] as const) {
    const body = await ok(`/api/v0/${list}/?fields=${names}&limit=5`);
    for (const item of body.items!) assert.deepEqual(Object.keys(item), names.split(','), list);
  }
});

test('fields: an unknown name, an empty selection or a huge list is a 400, on lists and details', async () => {
  for (const url of [
    '/api/v0/chapters/?fields=key,secret',
    '/api/v0/chapters/?fields=id',
    '/api/v0/chapters/?fields=,,,',
    '/api/v0/members/?fields=email',
    '/api/v0/chapters/london?fields=id',
    '/api/v0/chapters/london?fields=key,__proto__',
    `/api/v0/chapters/?fields=${Array.from({ length: 400 }, (_, i) => `f${i}`).join(',')}`,
    `/api/v0/chapters/?fields=${'key,'.repeat(2000)}`,
    `/api/v0/chapters/london?fields=${'key,'.repeat(2000)}`,
  ]) {
    const answer = await get(url);
    assert.equal(answer.status, 400, `${url.slice(0, 80)}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.message, 'Invalid request');
    assert.ok(JSON.stringify(answer.body).length < 2000, 'the error stays short');
  }
  // A missing record is still a 404 with fields.
  assert.equal((await get('/api/v0/chapters/nowhere-at-all?fields=key')).status, 404);
});
