import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import type { EventCategory, EventTable } from '../../../db/schema.ts';
import { event, utcDate } from '../../../../test/factories-community.ts';
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

const PATH = '/api/v0/events/';
const ALLOWED = bothWays(['start_date', 'end_date', 'latitude', 'longitude']);

type Event = Selectable<EventTable>;
let events: Event[];
// Categories spread over the events, the default (`other`) for the rest.
const CATEGORIES: Record<string, EventCategory> = {
  'AppSec-Past': 'appsec_days',
  ongoing: 'global',
  'future-b': 'partner',
  'future-a': 'global',
};
const api = useTestApp(async (db) => {
  const at = (
    key: string,
    start: number,
    end: number | null,
    latitude: number | null = null,
    longitude: number | null = null,
  ) =>
    event(db, {
      key,
      start_date: utcDate(start),
      end_date: end === null ? null : utcDate(end),
      latitude,
      longitude,
      category: CATEGORIES[key] ?? 'other',
    });
  // Relative to today (UTC): ended, ending today, ongoing, one-day events without an end date, future.
  // Some share dates or coordinates, and keys run against the ids, so only the id can break those ties.
  events = [
    await event(db, {
      key: 'AppSec-Past',
      name: 'AppSec Past',
      category: 'appsec_days',
      description: 'A conference.',
      url: 'https://example.org/appsec',
      start_date: utcDate(-10),
      end_date: utcDate(-8),
      latitude: 51.5,
      longitude: -0.12,
    }),
    await at('ended-yesterday', -3, -1),
    await at('ongoing', -5, 5, 40, 10),
    await at('ends-today', -2, 0, 40, -74),
    await at('single-today', 0, null, -33.9, 151),
    await at('single-past', -4, null, 40, 151),
    await at('future-b', 10, 12, 35.7, 139.7),
    await at('future-a', 10, 12),
    await at('future-c', 10, 11, 35.7, 10),
    await at('future-null', 20, null, -33.9, -74),
  ];
});

const { get } = api;
const inOrder = (rows: Event[], ordering: string) => keysInOrder(rows, ordering, 'key');
const upcoming = () => events.filter((e) => (e.end_date ?? e.start_date) >= utcDate(0));

test('the list shows every event, by -start_date,-end_date by default, with the list item fields', async () => {
  await assertDefaultOrdering(get, PATH, events, '-start_date,-end_date');
  const items = (await get(PATH)).json().items;
  const past = events[0]!;
  assert.deepEqual(
    items.find((i: { key: string }) => i.key === 'AppSec-Past'),
    {
      key: 'AppSec-Past',
      name: 'AppSec Past',
      start_date: past.start_date,
      end_date: past.end_date,
      latitude: 51.5,
      longitude: -0.12,
      url: 'https://example.org/appsec',
    },
  );
  const placeless = items.find((i: { key: string }) => i.key === 'future-null');
  assert.equal(placeless.end_date, null);
  assert.match(placeless.start_date, /^\d{4}-\d\d-\d\d$/);
  assert.deepEqual(Object.keys(items.find((i: { key: string }) => i.key === 'future-a')).sort(), [
    'end_date',
    'key',
    'latitude',
    'longitude',
    'name',
    'start_date',
    'url',
  ]);
});

testOrderings(
  'every ordering, ascending and descending (nulls last going up), several comma-separated; id breaks ties',
  get,
  PATH,
  () => events,
  ALLOWED,
  ['start_date,-end_date', '-latitude,longitude', 'end_date,start_date,latitude'],
);

test('category: repeatable, any case, either of the values given; with the other filters; unknown → 400 naming the categories', async () => {
  const of = (...categories: string[]) =>
    inOrder(
      events.filter((e) => categories.includes(e.category)),
      '-start_date,-end_date',
    );
  assert.deepEqual(itemKeys(await get(`${PATH}?category=global`)), of('global'));
  assert.deepEqual(itemKeys(await get(`${PATH}?category=GLOBAL`)), of('global'));
  assert.deepEqual(itemKeys(await get(`${PATH}?category=AppSec_Days`)), ['AppSec-Past']);
  assert.deepEqual(itemKeys(await get(`${PATH}?category=global&category=partner`)), of('global', 'partner'));
  assert.deepEqual(itemKeys(await get(`${PATH}?category=other`)), of('other'));
  assert.deepEqual(
    itemKeys(await get(`${PATH}?category=appsec_days&category=global&category=other&category=partner`)),
    inOrder(events, '-start_date,-end_date'),
  );
  assert.deepEqual(
    itemKeys(await get(`${PATH}?category=global&is_upcoming=true`)),
    ['ongoing', 'future-a'],
    'soonest first',
  );
  assert.deepEqual(itemKeys(await get(`${PATH}?category=global&latitude_gte=30`)), ['ongoing']);
  assert.deepEqual(itemKeys(await get(`${PATH}?category=`)), inOrder(events, '-start_date,-end_date'));
  for (const bad of ['bogus', 'global,partner', 'appsec', 'Global%20']) {
    const res = await get(`${PATH}?category=${bad}`);
    if (bad === 'Global%20') {
      assert.equal(res.statusCode, 200, 'surrounding blanks are trimmed');
      continue;
    }
    assert.equal(res.statusCode, 400, bad);
    assert.deepEqual(res.json().errors[0].loc, ['query', 'category'], bad);
    for (const category of ['appsec_days', 'global', 'other', 'partner'])
      assert.ok(res.json().errors[0].msg.includes(category), bad);
  }
  assert.equal((await get(`${PATH}?category=global&category=bogus`)).statusCode, 400);
});

test('is_upcoming=true: events ending today (UTC) or later, or starting then without an end date; soonest first', async () => {
  assert.deepEqual(
    upcoming()
      .map((e) => e.key)
      .sort(),
    ['ends-today', 'future-a', 'future-b', 'future-c', 'future-null', 'ongoing', 'single-today'],
  );
  for (const value of ['true', 'TRUE', 'yes', '1', 'On']) {
    const res = await get(`${PATH}?is_upcoming=${value}`);
    assert.equal(res.statusCode, 200, value);
    assert.deepEqual(itemKeys(res), inOrder(upcoming(), 'start_date,end_date'), value);
    assert.equal(res.json().count, upcoming().length);
  }
  const explicit = await get(`${PATH}?is_upcoming=true&ordering=-end_date`);
  assert.deepEqual(itemKeys(explicit), inOrder(upcoming(), '-end_date'));
});

test('is_upcoming false, absent or empty: every event in the default ordering; anything else is 400', async () => {
  for (const query of ['is_upcoming=false', 'is_upcoming=No', 'is_upcoming=0', 'is_upcoming=off', 'is_upcoming=', '']) {
    const res = await get(`${PATH}?${query}`);
    assert.equal(res.statusCode, 200, query);
    assert.deepEqual(itemKeys(res), inOrder(events, '-start_date,-end_date'), query);
  }
  for (const bad of ['maybe', '2', 'tru'])
    assertInvalid(await get(`${PATH}?is_upcoming=${bad}`), 'query', 'is_upcoming', bad);
});

test('coordinate bounds are inclusive, combine, skip events without coordinates, and are checked', async () => {
  const cases: [string, (e: Event) => boolean][] = [
    ['latitude_gte=40', (e) => e.latitude !== null && e.latitude >= 40],
    ['latitude_lte=35.7', (e) => e.latitude !== null && e.latitude <= 35.7],
    ['longitude_gte=10', (e) => e.longitude !== null && e.longitude >= 10],
    ['longitude_lte=-0.12', (e) => e.longitude !== null && e.longitude <= -0.12],
    [
      'latitude_gte=-34&latitude_lte=%2B40&longitude_gte=-74&longitude_lte=100.0',
      (e) =>
        e.latitude !== null &&
        e.longitude !== null &&
        e.latitude >= -34 &&
        e.latitude <= 40 &&
        e.longitude >= -74 &&
        e.longitude <= 100,
    ],
    ['latitude_gte=&longitude_lte=', () => true],
  ];
  for (const [query, match] of cases) {
    const res = await get(`${PATH}?${query}`);
    assert.equal(res.statusCode, 200, query);
    assert.deepEqual(itemKeys(res), inOrder(events.filter(match), '-start_date,-end_date'), query);
  }
  const upcomingNorth = await get(`${PATH}?is_upcoming=true&latitude_gte=40`);
  assert.deepEqual(
    itemKeys(upcomingNorth),
    inOrder(
      upcoming().filter((e) => e.latitude !== null && e.latitude >= 40),
      'start_date,end_date',
    ),
  );
  for (const [name, bad] of [
    ['latitude_gte', '91'],
    ['latitude_lte', '-90.5'],
    ['longitude_gte', '181'],
    ['longitude_lte', 'abc'],
    ['latitude_gte', '1e1'],
  ]) {
    assertInvalid(await get(`${PATH}?${name}=${bad}`), 'query', name!, `${name}=${bad}`);
  }
});

test('pagination: pages, past the end, limit and page_size bounds, Link header', async () => {
  await assertPagination(get, PATH, inOrder(events, '-start_date,-end_date'));
});

test('detail: the key in any case; the detail fields; a missing key is 404', async () => {
  const past = events[0]!;
  await assertDetail(get, PATH, ['AppSec-Past', 'appsec-past', 'APPSEC-PAST'], {
    key: 'AppSec-Past',
    name: 'AppSec Past',
    description: 'A conference.',
    start_date: past.start_date,
    end_date: past.end_date,
    latitude: 51.5,
    longitude: -0.12,
    url: 'https://example.org/appsec',
  });
  const bare = (await get('/api/v0/events/future-null')).json();
  assert.deepEqual(
    [bare.end_date, bare.latitude, bare.longitude, bare.description, bare.url],
    [null, -33.9, -74, '', ''],
  );
  await assertNotFound(get, PATH, ['nothing', 'www-event-appsec-past'], 'Event not found');
});

test('HEAD answers the list and the detail with 200 and no body', async () => {
  await assertHead(api, PATH, '/api/v0/events/appsec-past');
});
