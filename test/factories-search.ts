// What the three *.search.test.ts share: URLs carrying a `q`, the expected result of a date or number
// comparison, and the checks every searchable list must pass the same way (length limit, blank q,
// hostile input, and a fast-check property through HTTP; the pages of a search; q in the OpenAPI).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { assertInvalid, assertPage, keysOf, type Get } from './lists.ts';

/**
 * Percent-encodes `q` as UTF-8. A lone surrogate, which encodeURIComponent refuses, becomes the three
 * bytes a careless client would send (U+D800 → %ED%A0%80): bytes no UTF-8 decoder accepts.
 */
export function encodeQ(q: string): string {
  let out = '';
  for (const ch of q) {
    const code = ch.codePointAt(0)!;
    if (code < 0xd800 || code > 0xdfff) {
      out += encodeURIComponent(ch);
      continue;
    }
    for (const byte of [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]) {
      out += `%${byte.toString(16).toUpperCase()}`;
    }
  }
  return out;
}

/** `path?q=…&…`; `q` is encoded here, the other parameters as URLSearchParams would. */
export function searchUrl(path: string, q: string, params: Record<string, string> = {}): string {
  const rest = new URLSearchParams(params).toString();
  return `${path}?q=${encodeQ(q)}${rest ? `&${rest}` : ''}`;
}

export type Op = '' | '=' | '>' | '>=' | '<' | '<=';
export const OPS: readonly Op[] = ['', '=', '>', '>=', '<', '<='];

/** The field and operator written both ways the contract allows: `stars:>=10` and `stars>=10` (`stars:10` without one). */
export function spellings(field: string, op: Op, value: string): string[] {
  return op === '' ? [`${field}:${value}`] : [`${field}:${op}${value}`, `${field}${op}${value}`];
}

export function compareNumber(actual: number, op: Op, value: number): boolean {
  if (op === '>') return actual > value;
  if (op === '>=') return actual >= value;
  if (op === '<') return actual < value;
  if (op === '<=') return actual <= value;
  return actual === value;
}

/** A date condition means the whole UTC day `day` (`YYYY-MM-DD`): `>` is after its end, `<=` up to its end. */
export function compareDay(instant: string | Date, op: Op, day: string): boolean {
  const t = new Date(instant).getTime();
  const start = Date.parse(`${day}T00:00:00Z`);
  const end = start + 86_400_000;
  if (op === '>') return t >= end;
  if (op === '>=') return t >= start;
  if (op === '<') return t < start;
  if (op === '<=') return t < end;
  return t >= start && t < end;
}

/** `q` longer than 1,000 characters is a 400; characters are code points, as JSON Schema's maxLength counts them. */
export async function assertLengthLimit(get: Get, path: string): Promise<void> {
  const emoji = '\u{1F600}';
  for (const q of ['a'.repeat(1000), emoji.repeat(1000), `${'a'.repeat(999)}${emoji}`, `name:${'x'.repeat(995)}`]) {
    const res = await get(searchUrl(path, q));
    assert.equal(
      res.statusCode,
      200,
      `${[...q].length} code points, ${q.length} UTF-16 units: ${res.body.slice(0, 200)}`,
    );
  }
  for (const q of [
    'a'.repeat(1001),
    emoji.repeat(1001),
    `${'a'.repeat(1000)}${emoji}`,
    ` ${'a'.repeat(1000)}`,
    'a '.repeat(5000),
  ]) {
    assertInvalid(await get(searchUrl(path, q)), 'query', 'q', `${[...q].length} code points`);
  }
}

/**
 * An empty or blank `q` is ignored: the whole list. Blank of any length, since every empty filter is
 * dropped before validation (src/api/v0/common/query.ts).
 */
export async function assertBlankIgnored(get: Get, path: string, key: string, all: unknown[]): Promise<void> {
  for (const encoded of ['', '%20', '%20%20%20', '%09%0A', '+', '%20'.repeat(1001)]) {
    assert.deepEqual(await keysOf(get, `${path}?q=${encoded}`, key), all, `q=${encoded.slice(0, 20)}`);
  }
  assert.deepEqual(await keysOf(get, `${path}?q=`, key), await keysOf(get, path, key));
}

/**
 * Values of `q` that must give 200 and no error: broken quoting, control characters, NUL, invalid
 * UTF-8, numbers and dates at or past the limits, SQL, look-alike field names.
 */
export const HOSTILE: readonly string[] = [
  '"',
  '""',
  '"""',
  '\\',
  '\\"',
  'name:"',
  'name:"unbalanced',
  'name:"a\\',
  'name:\\"x\\"',
  '"a" "b',
  'name:"a"b"c',
  '\u0000',
  'name:\u0000',
  'name:"a\u0000b"',
  '\u0000name:x',
  'a\u0001b\u001fc\u007fd\u0085e',
  'name:\u200b',
  '\ufeff',
  '\u2028\u2029',
  '\ud800',
  'name:\udfff',
  'name:"\ud83d"',
  '\udc00\ud800',
  'stars:99999999999999999999999999',
  'stars:-99999999999999999999',
  'stars:>9007199254740992',
  'stars:<=9007199254740991',
  'forks:<-9007199254740991',
  'contributors:2147483648',
  'stars:1e308',
  'stars:Infinity',
  'stars:NaN',
  'stars:0x10',
  'stars:\uff11\uff10',
  'created_at:0000-01-01',
  'created_at:00000101',
  'created_at:9999-12-31',
  'created_at>9999-12-31',
  'created_at<=9999-12-31',
  'updated_at:99991231',
  'updated_at>=0001-01-01',
  'created_at<0001-01-01',
  'created_at:2023-02-29',
  'created_at:1900-02-29',
  'created_at:2024-13-01',
  'created_at:10000-01-01',
  'created_at:-2024-01-01',
  'created_at:2024-1-1',
  "'; DROP TABLE repositories; --",
  "name:' OR '1'='1",
  '1) OR (1=1',
  'name:"\\" OR 1=1 --"',
  '$1',
  'name:$$',
  "E'\\\\x00'",
  '::text',
  "%' OR 1=1 --",
  'name:%',
  'name:_',
  'name:\\',
  'name:%%',
  'name:\\%',
  'union select * from api_keys',
  '__proto__:x',
  'constructor:1',
  'toString:1',
  'hasOwnProperty:true',
  'NAME:x',
  'n\u0130me:x',
  'for\u212Aks:1',
  ':::',
  '>>>',
  '<=>',
  ':x',
  '>5',
  '=',
  'stars:>>1',
  'stars:=<1',
  'stars:><1',
  'archived=true',
  'name:>x',
  '\u{1F600}\u{1F468}\u200d\u{1F469}\u200d\u{1F467}',
  '\u05e9\u05dc\u05d5\u05dd',
  'e\u0301\u0301\u0301',
  '\u{10FFFF}',
  'a '.repeat(500),
  'e '.repeat(499) + 'e',
  'name:x '.repeat(142),
  '"'.repeat(1000),
  '\\'.repeat(1000),
  '%'.repeat(1000),
];

/** Already-encoded values: malformed percent escapes and bytes that are not UTF-8. */
export const HOSTILE_ENCODED: readonly string[] = [
  '%ED%A0%80',
  'name:%ED%A0%80',
  '%ED%BF%BF%ED%A0%80',
  '%F0%9F%98',
  '%FF',
  '%C0%80',
  '%C0%AF',
  '%E2%82',
  '%',
  '%z',
  '%zz',
  '%%',
  '%00',
  '%2500',
];

export async function assertHostileQueriesAnswer(get: Get, path: string): Promise<void> {
  const urls = [...HOSTILE.map((q) => searchUrl(path, q)), ...HOSTILE_ENCODED.map((q) => `${path}?q=${q}`)];
  for (const url of urls) {
    const res = await get(url);
    assert.equal(res.statusCode, 200, `${url.slice(0, 120)}: ${res.body.slice(0, 200)}`);
    const body = res.json();
    assert.ok(Array.isArray(body.items) && Number.isInteger(body.count), url.slice(0, 120));
  }
}

// Pieces of a query string after `q=`: text of any code points (encoded), the grammar's own
// characters, raw escapes that do not decode, and separators that end `q` or start another parameter.
const grammar = fc.constantFrom(
  'name',
  'language',
  'level',
  'country',
  'region',
  'stars',
  'forks',
  'contributors',
  'archived',
  'created_at',
  'updated_at',
  ':',
  '>',
  '<',
  '=',
  '>=',
  '<=',
  '"',
  '\\',
  ' ',
  '%',
  '_',
  '-',
  '2024-05-01',
  '20240501',
  '9999-12-31',
  '0000-01-01',
  '9007199254740993',
  'true',
  'off',
);
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map(encodeQ) },
  { weight: 4, arbitrary: grammar.map(encodeQ) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => encodeQ(String.fromCharCode(code))) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_ENCODED, '+', '&', '&q=x', '&limit=2', '&ordering=x', '#', '?') },
);
const rawQuery = fc.oneof(
  { weight: 5, arbitrary: fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 990, maxLength: 1010 }).map(encodeQ) },
);

/**
 * Random `q` through HTTP on one app: the answer is always 200 or a 400 of the contract, never a 5xx.
 * A 400 can only be about `q` (too long, repeated) or a parameter the random text added after `&`.
 */
export async function assertNever5xx(get: Get, path: string, runs = 200): Promise<void> {
  await fc.assert(
    fc.asyncProperty(rawQuery, async (raw) => {
      const res = await get(`${path}?q=${raw}`);
      assert.ok(res.statusCode === 200 || res.statusCode === 400, `${res.statusCode} ${res.body.slice(0, 200)}`);
      const body = res.json();
      if (res.statusCode === 200) {
        assert.ok(Array.isArray(body.items) && Number.isInteger(body.count));
      } else {
        assert.equal(body.message, 'Invalid request');
        assert.ok(body.errors.length > 0);
      }
    }),
    { numRuns: runs },
  );
}

/**
 * The tests every searchable list passes the same way, registered in the calling test file: the length
 * limit of `q`, a blank `q` (the list is `all()`, the `key` of every listed row in the default order),
 * hostile values, and the never-5xx property.
 */
export function searchContractTests(get: Get, path: string, key: string, all: () => unknown[]): void {
  test('q of 1,000 characters is accepted, 1,001 is a 400 (characters are code points)', async () => {
    await assertLengthLimit(get, path);
  });

  test('an empty or blank q is ignored', async () => {
    await assertBlankIgnored(get, path, key, all());
  });

  test('hostile q values answer 200', async () => {
    await assertHostileQueriesAnswer(get, path);
  });

  test('property: any q through HTTP gives 200 or 400, never a 5xx', async () => {
    await assertNever5xx(get, path, 200);
  });
}

/**
 * Every page of the search `q` (with `params`), `limit` items at a time, and the one past the end: the
 * items are `keys` (their `key`, in order), the envelope counts them, and the Link header keeps `q`
 * (`linkQ`, as it is encoded there) and names the last page.
 */
export async function assertSearchPages(
  get: Get,
  path: string,
  q: string,
  params: Record<string, string>,
  keys: readonly unknown[],
  { key, limit, linkQ }: { key: string; limit: number; linkQ: string },
): Promise<void> {
  const total = Math.ceil(keys.length / limit);
  for (let page = 1; page <= total + 1; page++) {
    const res = await assertPage(
      get,
      searchUrl(path, q, { ...params, limit: String(limit), page: String(page) }),
      page,
      keys,
      { key, limit },
    );
    const link = String(res.headers.link);
    assert.ok(link.includes(linkQ), link);
    assert.ok(link.includes(`page=${total}>; rel="last"`), link);
  }
}

/** The `q` parameter of the list at `path`, as the OpenAPI document describes it. */
export async function qParameter(
  get: Get,
  path: string,
): Promise<{ in: string; description: string; schema: { maxLength: number } }> {
  const doc = (await get('/api/v0/openapi.json')).json();
  return doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'q');
}
