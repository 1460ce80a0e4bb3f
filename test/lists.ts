// What the list tests of every REST resource share: the order a list must come in, computed from the
// inserted rows the way PostgreSQL sorts them, and the checks of the list contract (the 400 body, the
// envelope and Link header of each page, the limit and page bounds, the orderings).
import assert from 'node:assert/strict';

/** What a test reads of a response (a light-my-request response is one). */
export interface Response {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json(): any;
}
export type Get = (url: string) => Promise<Response>;

/** A row as a test keeps it: its id (the tie-breaker of every ordering) and the fields it sorts or lists by. */
type Tracked = { id: string | number };

const ISO_DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** A timestamp of the contract: ISO 8601 with seconds and an offset. */
export const assertDateTime = (value: unknown) => assert.match(String(value), ISO_DATE_TIME);

type Sortable = string | number | boolean | null;

/** Dates and ISO timestamps (whatever their offset) sort by instant; other strings by code unit. */
function sortable(value: unknown): Sortable {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string' && ISO_DATE_TIME.test(value)) return Date.parse(value);
  return value as Sortable;
}

// PostgreSQL sorts NULL above every value: last ascending, first descending.
function compare(a: Sortable, b: Sortable): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/**
 * The order PostgreSQL gives for an `ordering` parameter: nulls last ascending and first descending,
 * then the id in the direction of the last term (src/api/v0/common/ordering.ts). Strings compare by
 * code unit, which is the C collation of the test databases; test names avoid case and punctuation.
 */
export function expectedOrder<R extends Tracked>(rows: readonly R[], ordering: string): R[] {
  const terms = ordering.split(',').map((t) => ({ name: t.replace(/^-/, ''), sign: t.startsWith('-') ? -1 : 1 }));
  const value = (row: R, name: string) => sortable((row as unknown as Record<string, unknown>)[name]);
  return [...rows].sort((a, b) => {
    for (const { name, sign } of terms) {
      const c = compare(value(a, name), value(b, name));
      if (c !== 0) return sign * c;
    }
    return terms.at(-1)!.sign * Math.sign(Number(a.id) - Number(b.id));
  });
}

/** The `key` of each of `rows` in the order of `ordering`: what a list must give for those rows. */
export function keysInOrder<R extends Tracked, K extends keyof R>(
  rows: readonly R[],
  ordering: string,
  key: K,
): R[K][] {
  return expectedOrder(rows, ordering).map((row) => row[key]);
}

/** The `key` of each item of a list response, in order. */
export function itemKeys(res: Response, key = 'key'): unknown[] {
  return res.json().items.map((item: Record<string, unknown>) => item[key]);
}

/** The `key` of each item of `url`, which must answer 200. */
export async function keysOf(get: Get, url: string, key = 'key'): Promise<unknown[]> {
  const res = await get(url);
  assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 500)}`);
  return itemKeys(res, key);
}

/** A 400 of the contract: JSON `{ message, errors }` with one error, about the parameter `name` at `location`. */
export function assertInvalid(res: Response, location: 'query' | 'path', name: string, label = name): void {
  assert.equal(res.statusCode, 400, `${label}: ${res.body.slice(0, 500)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, label);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['errors', 'message'], label);
  assert.equal(body.message, 'Invalid request', label);
  assert.equal(body.errors.length, 1, label);
  assert.deepEqual(body.errors[0].loc, [location, name], label);
  assert.equal(typeof body.errors[0].msg, 'string', label);
}

/**
 * The Link header as rel → path and query, each rel once. Every address is absolute, on the request's origin (the
 * tests' requests are injected with Fastify's default host, localhost:80), as GitHub's are.
 */
function links(res: Response): Record<string, string> {
  const entries = [...String(res.headers.link ?? '').matchAll(/<([^>]*)>; rel="(\w+)"/g)].map(([, url, rel]) => {
    assert.ok(url!.startsWith('http://localhost:80/'), `an absolute address: ${url}`);
    return [rel!, url!.slice('http://localhost:80'.length)] as const;
  });
  const byRel = Object.fromEntries(entries);
  assert.equal(Object.keys(byRel).length, entries.length, `a rel repeated: ${String(res.headers.link)}`);
  return byRel;
}

/**
 * Page `page` of a list, `limit` items a page, at `url`: 200, the items are that page of `keys` (the
 * `key` of the whole list, in order), and the envelope counts them. The response, for more checks.
 */
export async function assertPage(
  get: Get,
  url: string,
  page: number,
  keys: readonly unknown[],
  { key, limit }: { key: string; limit: number },
): Promise<Response> {
  const res = await get(url);
  assert.equal(res.statusCode, 200, `page ${page}: ${res.body.slice(0, 500)}`);
  const total = Math.ceil(keys.length / limit);
  const { items, ...envelope } = res.json();
  assert.deepEqual(
    items.map((item: Record<string, unknown>) => item[key]),
    keys.slice((page - 1) * limit, page * limit),
    `page ${page}`,
  );
  assert.deepEqual(
    envelope,
    {
      count: keys.length,
      total_count: keys.length,
      current_page: page,
      total_pages: total,
      has_next: page < total,
      has_previous: page > 1,
    },
    `page ${page}`,
  );
  return res;
}

/**
 * Pages through `path` (no query string of its own) `limit` records at a time (first, second, last and
 * past-the-end pages) and checks the items, the envelope and the Link header of each; then `page_size`
 * as an alias of `limit`, the bounds 1 and 100 of both, and a 400 for every value out of bounds.
 * `keys` are the `key` of the whole list in its default order: at least three pages of them.
 */
export async function assertPagination(
  get: Get,
  path: string,
  keys: readonly unknown[],
  { key = 'key', limit = 3 }: { key?: string; limit?: number } = {},
): Promise<void> {
  const total = Math.ceil(keys.length / limit);
  assert.ok(total >= 3, 'needs a first, a middle and a last page');
  const pageUrl = (page: number) => `${path}?limit=${limit}&page=${page}`;
  for (const page of [1, 2, total, total + 1]) {
    const res = await assertPage(get, pageUrl(page), page, keys, { key, limit });
    // `next` also carries the opaque cursor of the following page (issue 12), after its page number.
    const { next, ...rest } = links(res);
    if (next !== undefined) {
      const cursor = new URL(next, 'http://x').searchParams.get('cursor');
      assert.ok(cursor, `next of page ${page} carries a cursor: ${next}`);
      rest.next = next.replace(`&cursor=${cursor}`, '');
      assert.deepEqual(
        await keysOf(get, next, key),
        keys.slice(page * limit, (page + 1) * limit),
        `the cursor of page ${page}`,
      );
    }
    assert.deepEqual(
      rest,
      {
        first: pageUrl(1),
        ...(page > 1 ? { prev: pageUrl(Math.min(page - 1, total)) } : {}),
        ...(page < total ? { next: pageUrl(page + 1) } : {}),
        last: pageUrl(total),
      },
      `Link of page ${page}`,
    );
  }
  assert.deepEqual(
    await keysOf(get, `${path}?page_size=${limit}&page=2`, key),
    keys.slice(limit, 2 * limit),
    'page_size is an alias of limit',
  );
  for (const bound of ['limit=1', 'limit=100', 'page_size=1', 'page_size=100']) {
    assert.deepEqual(await keysOf(get, `${path}?${bound}`, key), keys.slice(0, Number(bound.split('=')[1])), bound);
  }
  for (const bad of [
    'limit=0',
    'limit=101',
    'limit=1e2',
    'limit=2.5',
    'page_size=0',
    'page_size=101',
    'page=0',
    'page=x',
    'page=abc',
  ]) {
    assertInvalid(await get(`${path}?${bad}`), 'query', bad.split('=')[0]!, bad);
  }
}

/** Each ordering name both ways: `created_at, -created_at, …`, the values an `ordering` allows. */
export function bothWays(fields: readonly string[]): string[] {
  return fields.flatMap((field) => [field, `-${field}`]);
}

/**
 * Without `ordering` (with or without the trailing slash of `path`) and with an empty one, the list is
 * every one of `rows` in the order of `ordering`.
 */
export async function assertDefaultOrdering<R extends Tracked>(
  get: Get,
  path: string,
  rows: readonly R[],
  ordering: string,
  key = 'key',
): Promise<void> {
  const expected = keysInOrder(rows, ordering, key as keyof R);
  for (const url of [path, path.replace(/\/$/, ''), `${path}?ordering=`]) {
    const res = await get(url);
    assert.equal(res.statusCode, 200, url);
    assert.deepEqual(itemKeys(res, key), expected, url);
    assert.equal(res.json().count, rows.length, url);
  }
}

/** `path?ordering=…` gives the `key` of `rows` in the expected order, for each of `orderings`. */
export async function assertOrderings<R extends Tracked>(
  get: Get,
  path: string,
  rows: readonly R[],
  orderings: readonly string[],
  key = 'key',
): Promise<void> {
  for (const ordering of orderings) {
    assert.deepEqual(
      await keysOf(get, `${path}?ordering=${ordering}`, key),
      keysInOrder(rows, ordering, key as keyof R),
      ordering,
    );
  }
}

/**
 * Anything but the `allowed` values, alone or comma-separated without repeats, is a 400 whose message
 * names every allowed value: an unknown name, the id, a trailing comma, `+`, a double `-`, a repeat.
 */
export async function assertUnknownOrdering(get: Get, path: string, allowed: readonly string[]): Promise<void> {
  const first = allowed[0]!.replace(/^-/, '');
  const candidates = ['unknown', 'name', 'id', 'name,', `${first},`, `+${first}`, `${first},${first}`, '--created_at'];
  for (const bad of new Set(candidates.filter((value) => !allowed.includes(value)))) {
    const res = await get(`${path}?ordering=${encodeURIComponent(bad)}`);
    assertInvalid(res, 'query', 'ordering', bad);
    for (const value of allowed) assert.ok(res.json().errors[0].msg.includes(value), `${bad}: ${value}`);
  }
}

/**
 * The whole ordering contract of a list sorted on two `fields`: the default (`byDefault`), each field
 * both ways, the two mixed both ways, and a 400 naming the allowed values for anything else.
 */
export async function assertOrderingContract<R extends Tracked>(
  get: Get,
  path: string,
  rows: readonly R[],
  { key, fields: [a, b], byDefault }: { key: string; fields: readonly [string, string]; byDefault: string },
): Promise<void> {
  const allowed = bothWays([a, b]);
  await assertDefaultOrdering(get, path, rows, byDefault, key);
  await assertOrderings(get, path, rows, [...allowed, `${b},-${a}`, `-${b},${a}`], key);
  await assertUnknownOrdering(get, path, allowed);
}
