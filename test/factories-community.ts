// Community records (committees, projects, events, sponsors, leaders) with sensible defaults. Each
// factory returns the stored row, defaults included, so a test can derive the bodies and the order it
// expects from what it inserted. Below them, the list assertions the four community test files share.
import assert from 'node:assert/strict';
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../src/db/index.ts';
import type { DB } from '../src/db/schema.ts';

let sequence = 0;
const next = () => ++sequence;
const day = (n: number) => new Date(Date.UTC(2021, 0, 1) + n * 86_400_000).toISOString();

type Row<T extends keyof DB> = Partial<Insertable<DB[T]>>;

async function insert<T extends keyof DB & string>(db: Db, table: T, values: Insertable<DB[T]>): Promise<Selectable<DB[T]>> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (db.insertInto(table) as any).values(values).returningAll().executeTakeFirstOrThrow();
}

export function committee(db: Db, values: Row<'committees'> = {}) {
  const n = next();
  return insert(db, 'committees', { key: `committee-${n}`, name: `Committee ${n}`, is_active: true, created_at: day(n), updated_at: day(n + 10), ...values });
}

export function project(db: Db, values: Row<'projects'> = {}) {
  const n = next();
  return insert(db, 'projects', {
    key: `project-${n}`,
    name: `project ${n}`,
    level: 'other',
    is_active: true,
    created_at: day(n),
    updated_at: day(n + 10),
    ...values,
  });
}

export function event(db: Db, values: Row<'events'> = {}) {
  const n = next();
  const start = day(n).slice(0, 10);
  return insert(db, 'events', {
    key: `event-${n}`,
    name: `Event ${n}`,
    category: 'other',
    start_date: start,
    end_date: start,
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}

export function sponsor(db: Db, values: Row<'sponsors'> = {}) {
  const n = next();
  return insert(db, 'sponsors', { key: `sponsor-${n}`, name: `sponsor ${n}`, ...values });
}

export function leader(db: Db, values: Row<'leaders'> = {}) {
  const n = next();
  return insert(db, 'leaders', { key: `leader-${n}`, name: `Leader ${n}`, ...values });
}

export function entityLeader(db: Db, values: Insertable<DB['entity_leaders']>) {
  return insert(db, 'entity_leaders', values);
}

/** `YYYY-MM-DD` of today (UTC) shifted by `days`. */
export function utcDate(days = 0): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

type Sortable = string | number | boolean | Date | null | undefined;

/**
 * The order PostgreSQL gives for an `ordering` parameter: nulls last ascending and first descending,
 * then the id in the direction of the last term (src/api/v0/common/ordering.ts). Strings compare by
 * code unit, which is the C collation of the test databases; test names avoid case and punctuation.
 */
export function expectedOrder<R extends { id: string }>(rows: readonly R[], ordering: string): R[] {
  const terms = ordering.split(',').map((t) => ({ name: t.replace(/^-/, ''), sign: t.startsWith('-') ? -1 : 1 }));
  const value = (row: R, name: string) => {
    const v = (row as unknown as Record<string, Sortable>)[name];
    return v instanceof Date ? v.getTime() : v;
  };
  const compare = (a: Sortable, b: Sortable) => {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    return a < b ? -1 : 1;
  };
  return [...rows].sort((a, b) => {
    for (const { name, sign } of terms) {
      const c = compare(value(a, name), value(b, name));
      if (c !== 0) return sign * c;
    }
    return terms.at(-1)!.sign * Math.sign(Number(a.id) - Number(b.id));
  });
}

export interface Response {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json(): any;
}
export type Get = (url: string) => Promise<Response>;

/** A 400 of the contract, naming the one query parameter at fault. */
export function assertInvalidQuery(res: Response, name: string, what = name): void {
  assert.equal(res.statusCode, 400, what);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['errors', 'message'], what);
  assert.equal(body.message, 'Invalid request');
  assert.equal(body.errors.length, 1, what);
  assert.deepEqual(body.errors[0].loc, ['query', name], what);
  assert.equal(typeof body.errors[0].msg, 'string');
}

function linkPages(res: Response): Record<string, number> {
  const pages: Record<string, number> = {};
  for (const [, url, rel] of String(res.headers.link ?? '').matchAll(/<([^>]*)>; rel="(\w+)"/g)) {
    pages[rel!] = Number(new URL(url!, 'http://x').searchParams.get('page'));
  }
  return pages;
}

/**
 * Pages through `path` (no query string of its own) three records at a time and checks the envelope,
 * the Link header and the limit bounds; `keys` is the whole list in the default order (at least 7).
 */
export async function assertPagination(get: Get, path: string, keys: string[]): Promise<void> {
  const limit = 3;
  const total = Math.ceil(keys.length / limit);
  assert.ok(total >= 3, 'needs a first, a middle and a last page');
  const expectedLinks = (page: number) => ({
    first: 1,
    ...(page > 1 ? { prev: Math.min(page - 1, total) } : {}),
    ...(page < total ? { next: page + 1 } : {}),
    last: total,
  });
  for (const page of [1, 2, total, total + 1]) {
    const res = await get(`${path}?limit=${limit}&page=${page}`);
    assert.equal(res.statusCode, 200, `page ${page}`);
    const body = res.json();
    assert.deepEqual(body.items.map((i: { key: string }) => i.key), keys.slice((page - 1) * limit, page * limit), `page ${page}`);
    assert.deepEqual(
      { ...body, items: undefined },
      { items: undefined, count: keys.length, total_count: keys.length, current_page: page, total_pages: total, has_next: page < total, has_previous: page > 1 },
      `page ${page}`,
    );
    assert.deepEqual(linkPages(res), expectedLinks(page), `Link of page ${page}`);
  }
  const alias = await get(`${path}?page_size=${limit}&page=2`);
  assert.deepEqual(alias.json().items.map((i: { key: string }) => i.key), keys.slice(limit, 2 * limit));
  for (const bound of ['limit=1', 'limit=100', 'page_size=1', 'page_size=100']) {
    const res = await get(`${path}?${bound}`);
    assert.equal(res.statusCode, 200, bound);
    assert.equal(res.json().items.length, Math.min(keys.length, Number(bound.split('=')[1])), bound);
  }
  for (const bad of ['limit=0', 'limit=101', 'page_size=0', 'page_size=101', 'page=0', 'page=x']) {
    assertInvalidQuery(await get(`${path}?${bad}`), bad.split('=')[0]!, bad);
  }
}

/** The keys of each page of `path?ordering=…`, in order, for every allowed value up and down. */
export async function assertOrderings<R extends { id: string; key: string }>(
  get: Get,
  path: string,
  rows: readonly R[],
  orderings: string[],
): Promise<void> {
  for (const ordering of orderings) {
    const res = await get(`${path}${path.includes('?') ? '&' : '?'}ordering=${ordering}`);
    assert.equal(res.statusCode, 200, ordering);
    const expected = expectedOrder(rows, ordering).map((r) => r.key);
    assert.deepEqual(res.json().items.map((i: { key: string }) => i.key), expected, ordering);
  }
}

/** An unknown ordering is a 400 whose message names every allowed value. */
export async function assertUnknownOrdering(get: Get, path: string, allowed: string[]): Promise<void> {
  for (const bad of ['unknown', 'name,', allowed[0]!.replace(/^-?/, '+'), `${allowed[0]},${allowed[0]}`]) {
    const res = await get(`${path}?ordering=${encodeURIComponent(bad)}`);
    assertInvalidQuery(res, 'ordering', bad);
    for (const value of allowed) assert.ok(res.json().errors[0].msg.includes(value), `${bad}: ${value}`);
  }
}
