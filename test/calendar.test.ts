// Events as iCalendar (issue 28, item 4): `format=ics` / `Accept: text/calendar` on /api/v0/events/ (keyed, the
// list's filters and pages) and the keyless feed /calendar/events.ics (the coming events and those of the past year,
// one document per data version and UTC day, with an ETag). Read back by a maintained parser (ical.js): the event
// count, all-day dates with an exclusive end, stable UIDs, escaped text; the lines themselves are checked against
// RFC 5545 (CRLF, folded at 75 octets).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import ICAL from 'ical.js';
import { buildTestApp, type TestApp } from './app.ts';
import { event, utcDate } from './factories-community.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';
import { eventUid } from '../src/api/v0/events/events.calendar.ts';

const LONG =
  'Ünïcödé; commas, semicolons; a backslash \\ and a line\nbreak — 東京 Zürich Bogotá 🚀 '.repeat(3) + 'the end';
let t: TestApp;
before(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  // Relative to today (UTC). `end` null: a one-day event.
  const spec: [key: string, start: number, end: number | null, extra: Parameters<typeof event>[1]][] = [
    ['two-years-ago', -800, -798, {}],
    ['past-400', -402, -400, {}],
    ['past-300', -302, -300, { category: 'appsec_days' }],
    ['yesterday', -3, -1, {}],
    ['ongoing', -2, 2, { latitude: 48.20849, longitude: 16.37208, suggested_location: 'Vienna, Austria' }],
    ['single-today', 0, null, { url: 'javascript:alert(1)', name: 'Bell\u0007 and\ttab' }],
    [
      'AppSec-Future',
      30,
      34,
      {
        name: LONG,
        description: 'Talks, trainings; and a CTF.\r\nSecond line.',
        url: 'https://example.org/event?a=1,2;b',
        category: 'global',
        suggested_location: 'São Paulo, Brazil',
        latitude: -23.55052,
        longitude: -46.633309,
      },
    ],
    ['later-partner', 60, 61, { category: 'partner' }],
  ];
  for (const [key, start, end, extra] of spec)
    await event(db, {
      key,
      name: `Event ${key}`,
      start_date: utcDate(start),
      end_date: end === null ? null : utcDate(end),
      ...extra,
    });
});
after(() => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

interface Parsed {
  calendar: ICAL.Component;
  events: ICAL.Event[];
}

/** Parsed by ical.js, after checking the text's lines: CRLF only, at most 75 octets, continuations start with a space. */
function readCalendar(body: string): Parsed {
  assert.ok(body.endsWith('\r\n'));
  const lines = body.slice(0, -2).split('\r\n');
  for (const line of lines) {
    assert.doesNotMatch(line, /[\r\n]/, 'a bare CR or LF');
    assert.ok(Buffer.byteLength(line) <= 75, `longer than 75 octets: ${line}`);
    assert.ok(!/(?!\t)\p{Cc}/u.test(line), `a control character: ${JSON.stringify(line)}`);
  }
  // A fold never cuts a UTF-8 sequence: every line is valid UTF-8 on its own.
  for (const line of lines) assert.equal(Buffer.from(Buffer.from(line).toString('utf8')).toString(), line);
  assert.equal(lines[0], 'BEGIN:VCALENDAR');
  assert.equal(lines.at(-1), 'END:VCALENDAR');
  const calendar = new ICAL.Component(ICAL.parse(body) as unknown[]);
  assert.equal(calendar.getFirstPropertyValue('version'), '2.0');
  assert.match(String(calendar.getFirstPropertyValue('prodid')), /^-\/\/OWASP community data service\/\/Events /);
  assert.equal(calendar.getFirstPropertyValue('x-wr-calname'), 'OWASP events');
  assert.equal(calendar.getFirstPropertyValue('name'), 'OWASP events');
  return { calendar, events: calendar.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v)) };
}

const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

interface Item {
  key: string;
  name: string;
  start_date: string;
  end_date: string | null;
  latitude: number | null;
  longitude: number | null;
  url: string;
}

/** Each VEVENT is the JSON item: all-day, DTEND the day after the last day, its UID, SUMMARY, GEO, URL. */
function assertEvents(events: ICAL.Event[], items: Item[]) {
  assert.equal(events.length, items.length);
  for (const [i, item] of items.entries()) {
    const e = events[i]!;
    assert.equal(e.uid, eventUid(item.key), item.key);
    // TEXT holds no control character but the tab (and line breaks, escaped).
    assert.equal(e.summary, item.name.replace(/\r\n?/g, '\n').replace(/(?![\t\n])\p{Cc}/gu, ''), item.key);
    assert.ok(e.startDate.isDate && e.endDate.isDate, `${item.key}: all-day`);
    assert.equal(e.startDate.toString(), item.start_date, item.key);
    assert.equal(e.endDate.toString(), dayAfter(item.end_date ?? item.start_date), `${item.key}: exclusive end`);
    const geo = e.component.getFirstPropertyValue('geo');
    assert.deepEqual(geo, item.latitude === null ? null : [item.latitude, item.longitude], item.key);
    const url = e.component.getFirstPropertyValue('url');
    assert.equal(url, /^https?:/.test(item.url) ? new URL(item.url).href : null, item.key);
    assert.ok(e.component.getFirstPropertyValue('dtstamp'), item.key);
    assert.equal(e.component.getFirstPropertyValue('transp'), 'TRANSPARENT');
  }
}

test('format=ics and Accept: text/calendar: one VEVENT per item of the page, in order, with its dates, UID and fields', async () => {
  for (const query of [
    '',
    '?is_upcoming=true',
    '?category=global&category=partner',
    '?ordering=start_date&limit=3&page=2',
  ]) {
    const items = (await get(`/api/v0/events/${query}`)).json().items as Item[];
    for (const res of [
      await get(`/api/v0/events/${query}${query ? '&' : '?'}format=ics`),
      await get(`/api/v0/events/${query}`, { accept: 'text/calendar' }),
    ]) {
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'text/calendar; charset=utf-8');
      assert.equal(res.headers['content-disposition'], 'attachment; filename="events.ics"');
      assertEvents(readCalendar(res.body).events, items);
    }
  }
  // The page's Link as for JSON: the calendar of the next page is one request away.
  const paged = await get('/api/v0/events/?format=ics&limit=3&ordering=start_date');
  assert.match(String(paged.headers.link), /format=ics.*rel="next"/);
});

test('text is escaped and folded, and reads back exactly; a place, a description, a category, a bad URL left out', async () => {
  const { events } = readCalendar((await get('/api/v0/events/?format=ics')).body);
  const byKey = (key: string) => events.find((e) => e.uid === eventUid(key))!;
  const future = byKey('AppSec-Future');
  assert.equal(future.summary, LONG);
  assert.equal(future.location, 'São Paulo, Brazil');
  assert.equal(future.description, 'Talks, trainings; and a CTF.\nSecond line.\n\nhttps://example.org/event?a=1,2;b');
  assert.deepEqual(future.component.getFirstProperty('categories')!.getValues(), ['Global']);
  assert.equal(byKey('ongoing').location, 'Vienna, Austria');
  assert.deepEqual(byKey('past-300').component.getFirstProperty('categories')!.getValues(), ['AppSec Days']);
  const single = byKey('single-today');
  assert.equal(single.component.getFirstPropertyValue('url'), null, 'javascript: is no URL');
  assert.equal(single.summary, 'Bell and\ttab', 'control characters but the tab dropped');
  assert.equal(single.description, null);
  assert.equal(single.location, null);
  // The raw lines: the escapes of RFC 5545 §3.3.11, and a long line folded.
  const body = (await get('/api/v0/events/?format=ics')).body;
  assert.match(
    body.replace(/\r\n /g, ''),
    /SUMMARY:Ünïcödé\\; commas\\, semicolons\\; a backslash \\\\ and a line\\nbreak/,
  );
  assert.match(body, /\r\n [^ ]/, 'folded lines');
});

test('UIDs: UUIDs of the keys, unique, the same across requests, a change of the record, the API and the feed', async () => {
  const uids = readCalendar((await get('/api/v0/events/?format=ics')).body).events.map((e) => e.uid);
  assert.equal(new Set(uids).size, uids.length);
  for (const uid of uids) assert.match(uid, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(eventUid('AppSec-Future'), eventUid('appsec-future'), 'keys are case-insensitive');
  const feedBefore = await get('/calendar/events.ics');
  const dtstamp = (body: string, key: string) =>
    String(
      readCalendar(body)
        .events.find((e) => e.uid === eventUid(key))!
        .component.getFirstPropertyValue('dtstamp'),
    );
  const stampBefore = dtstamp(feedBefore.body, 'ongoing');
  await t.database.db
    .updateTable('events')
    .set({ name: 'Ongoing, renamed', updated_at: new Date() })
    .where('key', '=', 'ongoing')
    .execute();
  t.app.shared.watcher.set(await bumpDataVersion(t.database.db));
  const after = readCalendar((await get('/api/v0/events/?format=ics')).body).events;
  assert.deepEqual(
    after.map((e) => e.uid),
    uids,
  );
  assert.equal(after.find((e) => e.uid === eventUid('ongoing'))!.summary, 'Ongoing, renamed');
  const feedAfter = await get('/calendar/events.ics');
  assert.notEqual(feedAfter.headers.etag, feedBefore.headers.etag, 'the feed is built again after a data change');
  assert.notEqual(dtstamp(feedAfter.body, 'ongoing'), stampBefore, 'DTSTAMP: the record changed');
  assert.equal(dtstamp(feedAfter.body, 'past-300'), dtstamp(feedBefore.body, 'past-300'));
  const apiUids = new Set(uids);
  for (const e of readCalendar(feedAfter.body).events) assert.ok(apiUids.has(e.uid), 'the feed and the API agree');
});

test('fields, group_by and ics: 400; format=ics elsewhere: 400; an Accept of none of the four: 406', async () => {
  for (const url of [
    '/api/v0/events/?format=ics&fields=key,name',
    '/api/v0/events/?format=ics&group_by=category',
    '/api/v0/chapters/?format=ics',
    '/api/v0/events/key?format=ics',
  ]) {
    const res = await get(url);
    assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
    assert.match(String(res.headers['content-type']), /^application\/json/);
  }
  assert.equal((await get('/api/v0/events/?group_by=category', { accept: 'text/calendar' })).statusCode, 400);
  const refused = await get('/api/v0/events/', { accept: 'text/html' });
  assert.equal(refused.statusCode, 406);
  assert.equal(
    refused.json().errors[0].msg,
    'must allow one of: application/json, application/geo+json, text/csv, text/calendar',
  );
});

test('the keyless feed: no key, the coming events and those of the past year, soonest first; ETag, 304, HEAD', async () => {
  // An instance that requires a key: the API refuses, the feed does not.
  const keyed = await buildTestApp({ env: { REST_AUTH: 'required' }, sharedDatabase: t.database });
  try {
    assert.equal((await keyed.app.inject({ url: '/api/v0/events/?format=ics' })).statusCode, 401);
    const res = await keyed.app.inject({ url: '/calendar/events.ics' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/calendar; charset=utf-8');
    assert.equal(res.headers['content-disposition'], 'inline; filename="owasp-events.ics"');
    assert.equal(res.headers['cache-control'], 'no-cache');
    const { calendar, events } = readCalendar(res.body);
    const inWindow = (await get('/api/v0/events/?ordering=start_date'))
      .json()
      .items.filter((i: Item) => (i.end_date ?? i.start_date) >= utcDate(-365)) as Item[];
    assert.deepEqual(
      inWindow.map((i) => i.key),
      ['past-300', 'yesterday', 'ongoing', 'single-today', 'AppSec-Future', 'later-partner'],
    );
    assertEvents(events, inWindow);
    assert.equal(calendar.getFirstPropertyValue('refresh-interval')?.toString(), 'PT12H');
    // Validators: the same document until the data or the day changes.
    const etag = String(res.headers.etag);
    assert.equal((await keyed.app.inject({ url: '/calendar/events.ics' })).headers.etag, etag);
    const conditional = await keyed.app.inject({ url: '/calendar/events.ics', headers: { 'if-none-match': etag } });
    assert.equal(conditional.statusCode, 304);
    assert.equal(conditional.body, '');
    const head = await keyed.app.inject({ method: 'HEAD', url: '/calendar/events.ics' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers.etag, etag);
    assert.equal(head.body, '');
  } finally {
    await keyed.close();
  }
});

test('the map page links the calendar feed', async () => {
  const page = await get('/map');
  assert.match(page.body, /<a href="\/calendar\/events\.ics"[^>]*>[^<]*[Ss]ubscribe/);
});
