// Formats honest everywhere (issue 45, item 4): every endpoint answers a `format` or an Accept it offers, and refuses
// any other with a 400 (`format`) or a 406 (Accept) that names what it offers; never JSON in disguise. One table:
// every GET operation of the OpenAPI document (the registry, search, dumps; their types read from the document) and
// every other endpoint (the welcome, the document, the dumps' files, the change stream, OGC API – Features, the
// calendar and map data, the pages, status and metrics). Search answers CSV like the lists.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { RESOURCES } from '../src/api/v0/resources.ts';
import { SEARCH_OPERATION_ID } from '../src/api/v0/search/search.routes.ts';
import { FORMATS } from '../src/http/negotiate.ts';

let t: TestApp;
let base: string;
const rows: Row[] = [];

interface Row {
  url: string;
  /** What it answers, the default first. */
  offered: string[];
  /** The status of a plain GET (no Accept, no format); undefined: not requested (a stream that never ends). */
  plain?: number;
}

const JSON_ONLY = ['application/json'];

before(async () => {
  t = await buildTestApp({ importBundled: true });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const doc = (await t.app.inject({ url: '/api/v0/openapi.json' })).json() as {
    paths: Record<string, { get?: { operationId: string; responses: Record<string, { content?: object }> } }>;
  };
  const examples = new Map<string, Record<string, string>>();
  for (const operation of RESOURCES.flatMap((resource) => resource.operations))
    if (operation.example) examples.set(operation.operationId, (await operation.example(t.database.db))!);
  for (const [template, methods] of Object.entries(doc.paths)) {
    const op = methods.get;
    if (!op) continue;
    const params = examples.get(op.operationId) ?? {};
    let url = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));
    if (op.operationId === SEARCH_OPERATION_ID) url += '?q=owasp';
    rows.push({ url, offered: Object.keys(op.responses['200']!.content!), plain: 200 });
  }
  rows.push(
    { url: '/api/v0/', offered: JSON_ONLY, plain: 200 },
    { url: '/api/v0/openapi.json', offered: JSON_ONLY, plain: 200 },
    // No dumps built in this test: the file is a 404, but the types are checked first.
    { url: '/api/v0/dumps/chapters.ndjson.gz', offered: ['application/gzip'], plain: 404 },
    { url: '/api/v0/changes/stream', offered: ['text/event-stream'] },
    { url: '/ogc/', offered: JSON_ONLY, plain: 200 },
    { url: '/ogc/conformance', offered: JSON_ONLY, plain: 200 },
    { url: '/ogc/api', offered: ['application/vnd.oai.openapi+json;version=3.0', 'application/json'], plain: 200 },
    { url: '/ogc/collections', offered: JSON_ONLY, plain: 200 },
    { url: '/ogc/collections/chapters', offered: JSON_ONLY, plain: 200 },
    { url: '/ogc/collections/events/items', offered: ['application/geo+json', 'application/json'], plain: 200 },
    {
      url: '/ogc/collections/chapters/items/london',
      offered: ['application/geo+json', 'application/json'],
      plain: 200,
    },
    { url: '/calendar/events.ics', offered: ['text/calendar'], plain: 200 },
    { url: '/map/chapters.geojson', offered: ['application/geo+json'], plain: 200 },
    { url: '/map/events.geojson', offered: ['application/geo+json'], plain: 200 },
    { url: '/llms.txt', offered: ['text/plain'], plain: 200 },
    { url: '/status/', offered: JSON_ONLY, plain: 200 },
    { url: '/livez', offered: JSON_ONLY, plain: 200 },
    { url: '/readyz', offered: JSON_ONLY, plain: 200 },
    { url: '/metrics', offered: ['text/plain'], plain: 200 },
    { url: '/', offered: ['text/html'], plain: 200 },
    { url: '/map', offered: ['text/html'], plain: 200 },
    { url: '/settings/api-keys', offered: ['text/html'], plain: 200 },
  );
});
after(() => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => fetch(`${base}${url}`, { headers });
const withParam = (url: string, param: string) => `${url}${url.includes('?') ? '&' : '?'}${param}`;
const formatsOf = (types: string[]) =>
  Object.entries(FORMATS)
    .filter(([, type]) => types.includes(type))
    .map(([name]) => name);

test('the table covers the registry, search, dumps and every other endpoint', () => {
  const urls = rows.map((row) => row.url);
  for (const resource of RESOURCES) assert.ok(urls.includes(`/api/v0/${resource.name}/`), resource.name);
  assert.ok(urls.some((url) => url.startsWith('/api/v0/search/')));
  assert.ok(urls.includes('/api/v0/dumps/'));
  assert.ok(rows.length >= 50, `${rows.length} endpoints`);
});

test('each endpoint: its default plainly; each format it offers by name; another format 400; an Accept of none 406', async () => {
  for (const { url, offered, plain } of rows) {
    if (plain !== undefined) {
      const res = await get(url);
      assert.equal(res.status, plain, `${url}: ${await res.clone().text()}`);
      if (plain === 200)
        assert.ok(
          String(res.headers.get('content-type')).startsWith(offered[0]!),
          `${url}: ${res.headers.get('content-type')}`,
        );
      await res.arrayBuffer();
    }
    for (const name of formatsOf(offered)) {
      if (plain === undefined) continue;
      const res = await get(withParam(url, `format=${name}`));
      const type = FORMATS[name as keyof typeof FORMATS];
      // OGC API – Features names the representation `f`, and refuses any parameter it does not know.
      if (url.startsWith('/ogc/collections/') && url.includes('/items')) {
        assert.equal(res.status, 400, `${url} format=${name}`);
        continue;
      }
      assert.equal(res.status, plain, `${url} format=${name}: ${await res.clone().text()}`);
      if (plain === 200) assert.ok(String(res.headers.get('content-type')).startsWith(type), `${url} format=${name}`);
      await res.arrayBuffer();
    }
    const xml = await get(withParam(url, 'format=xml'));
    assert.equal(xml.status, 400, `${url}?format=xml`);
    const refusal = (await xml.json()) as { errors: { loc: string[]; msg: string }[] };
    assert.deepEqual(refusal.errors[0]!.loc, ['query', 'format'], url);
    for (const name of url.startsWith('/ogc/collections/') && url.includes('/items') ? [] : formatsOf(offered))
      assert.match(refusal.errors[0]!.msg, new RegExp(`\\b${name}\\b`), `${url}: ${refusal.errors[0]!.msg}`);

    const nonsense = await get(url, { accept: 'application/x-nothing-offered' });
    assert.equal(nonsense.status, 406, `${url} Accept: application/x-nothing-offered`);
    const body = (await nonsense.json()) as { errors: { loc: string[]; msg: string }[] };
    assert.deepEqual(body.errors[0]!.loc, ['header', 'accept'], url);
    for (const type of offered) assert.ok(body.errors[0]!.msg.includes(type), `${url}: ${body.errors[0]!.msg}`);
  }
});

test('search answers CSV like the lists: a header row, one row per result, the Link header for the pages', async () => {
  for (const headers of [{}, { accept: 'text/csv' }] as Record<string, string>[]) {
    const url = Object.keys(headers).length
      ? '/api/v0/search/?q=owasp&limit=3'
      : '/api/v0/search/?q=owasp&limit=3&format=csv';
    const res = await get(url, headers);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="search.csv"');
    assert.match(String(res.headers.get('link')), /rel="next"/);
    const lines = (await res.text()).split('\r\n');
    assert.equal(lines[0], 'resource,id,name,score,highlight,url');
    assert.equal(lines.length, 5, 'a header, three rows and the last line end');
    const json = (await (await get('/api/v0/search/?q=owasp&limit=3')).json()) as { items: { id: string }[] };
    json.items.forEach((item, i) => assert.ok(lines[i + 1]!.includes(`"${item.id}"`), lines[i + 1]));
  }
});
