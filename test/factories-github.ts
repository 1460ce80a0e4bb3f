// The GitHub records test/factories.ts does not cover (milestones, labels, releases), and the list
// assertions the GitHub resource tests share: expected orders are computed here from the inserted rows.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Insertable } from 'kysely';
import type { Db } from '../src/db/index.ts';
import type { DB } from '../src/db/schema.ts';

let sequence = 0;
const next = () => ++sequence;

/** An ISO timestamp `n` days after 2020-01-01: tests pick equal or distinct dates by number. */
export const day = (n: number) => new Date(Date.UTC(2020, 0, 1) + n * 86_400_000).toISOString();

type Row<T extends keyof DB> = Partial<Insertable<DB[T]>>;

async function insert<T extends keyof DB & string>(db: Db, table: T, values: Insertable<DB[T]>): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const row = await (db.insertInto(table) as any).values(values).returning('id').executeTakeFirstOrThrow();
  return Number((row as { id: string }).id);
}

export function milestone(db: Db, values: Row<'milestones'> & { repository_id: string | number }) {
  const n = next();
  return insert(db, 'milestones', {
    github_id: 5_000_000 + n,
    number: n,
    title: `Milestone ${n}`,
    state: 'open',
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}

export function label(db: Db, values: Row<'labels'> & { repository_id: string | number }) {
  const n = next();
  return insert(db, 'labels', { github_id: 6_000_000 + n, name: `label-${n}`, color: 'ededed', ...values });
}

export function release(db: Db, values: Row<'releases'> & { repository_id: string | number }) {
  const n = next();
  return insert(db, 'releases', {
    github_id: 7_000_000 + n,
    tag_name: `v${n}.0.0`,
    name: `Release ${n}`,
    published_at: day(n),
    created_at: day(n),
    ...values,
  });
}

// ---- Assertions shared by the GitHub list tests ----

export type Get = (url: string) => Promise<LightMyRequestResponse>;
type Tracked = { id: number } & Record<string, unknown>;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
export const assertDateTime = (value: unknown) => assert.match(String(value), ISO);

// PostgreSQL sorts NULL above every value: last ascending, first descending.
function compare(a: unknown, b: unknown): number {
  if (a === null || a === undefined || b === null || b === undefined) return (a == null ? 1 : 0) - (b == null ? 1 : 0);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const [x, y] = [new Date(String(a)).getTime(), new Date(String(b)).getTime()];
  return x - y;
}

/** The order the API must return: the ordering terms, then the id in the direction of the last term. */
export function expectedOrder<T extends Tracked>(rows: T[], ordering: string): T[] {
  const terms = ordering.split(',').map((term) => ({ field: term.replace(/^-/, ''), sign: term.startsWith('-') ? -1 : 1 }));
  terms.push({ field: 'id', sign: terms.at(-1)!.sign });
  return [...rows].sort((a, b) => {
    for (const { field, sign } of terms) {
      const c = compare(a[field], b[field]);
      if (c !== 0) return c * sign;
    }
    return 0;
  });
}

export async function keysOf(get: Get, url: string, key: string): Promise<unknown[]> {
  const res = await get(url);
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json().items.map((item: Record<string, unknown>) => item[key]);
}

export function assertInvalid(res: LightMyRequestResponse, location: 'query' | 'path', name: string, label = ''): void {
  assert.equal(res.statusCode, 400, `${label} ${res.body}`);
  assert.match(String(res.headers['content-type']), /application\/json/);
  const body = res.json();
  assert.equal(body.message, 'Invalid request', label);
  assert.deepEqual(body.errors[0].loc, [location, name], label);
  assert.equal(typeof body.errors[0].msg, 'string', label);
}

/** The default ordering, every allowed value both ways, and 400 for anything else. */
export async function assertOrderings<T extends Tracked>(get: Get, path: string, rows: T[], key: string, fields: string[], byDefault: string) {
  const expected = (ordering: string) => expectedOrder(rows, ordering).map((row) => row[key]);
  assert.deepEqual(await keysOf(get, path, key), expected(byDefault), 'default ordering');
  const orderings = [...fields.flatMap((f) => [f, `-${f}`]), `${fields[1]},-${fields[0]}`, `-${fields[1]},${fields[0]}`];
  for (const ordering of orderings) {
    assert.deepEqual(await keysOf(get, `${path}?ordering=${ordering}`, key), expected(ordering), ordering);
  }
  for (const bad of ['name', 'id', `${fields[0]},${fields[0]}`, `+${fields[0]}`, `${fields[0]},`, '--created_at']) {
    assertInvalid(await get(`${path}?ordering=${encodeURIComponent(bad)}`), 'query', 'ordering', bad);
  }
  assert.deepEqual(await keysOf(get, `${path}?ordering=`, key), expected(byDefault), 'empty ordering is the default');
}

/** First, middle, last and past-the-end pages of two records each, with the envelope and Link header. */
export async function assertPagination(get: Get, path: string, keys: unknown[], key: string): Promise<void> {
  assert.ok(keys.length >= 5, 'pagination needs at least three pages of two');
  const totalPages = Math.ceil(keys.length / 2);
  for (const page of [1, 2, totalPages, totalPages + 1]) {
    const res = await get(`${path}?limit=2&page=${page}`);
    assert.equal(res.statusCode, 200);
    const { items, ...envelope } = res.json();
    assert.deepEqual(items.map((item: Record<string, unknown>) => item[key]), keys.slice((page - 1) * 2, page * 2), `page ${page}`);
    assert.deepEqual(envelope, {
      count: keys.length,
      total_count: keys.length,
      current_page: page,
      total_pages: totalPages,
      has_next: page < totalPages,
      has_previous: page > 1,
    });
    const link = String(res.headers.link);
    assert.ok(link.includes(`<${path}?limit=2&page=1>; rel="first"`), link);
    assert.ok(link.includes(`<${path}?limit=2&page=${totalPages}>; rel="last"`), link);
    assert.equal(link.includes('rel="next"'), page < totalPages, link);
    assert.equal(link.includes('rel="prev"'), page > 1, link);
  }
  const middle = String((await get(`${path}?limit=2&page=2`)).headers.link);
  assert.ok(middle.includes(`<${path}?limit=2&page=1>; rel="prev"`) && middle.includes(`<${path}?limit=2&page=3>; rel="next"`), middle);
  assert.deepEqual(await keysOf(get, `${path}?page_size=2&page=2`, key), keys.slice(2, 4), 'page_size is an alias of limit');
  assert.deepEqual(await keysOf(get, `${path}?limit=1`, key), keys.slice(0, 1), 'limit 1');
  assert.deepEqual(await keysOf(get, `${path}?limit=100`, key), keys, 'limit 100');
  for (const [name, value] of [['limit', '0'], ['limit', '101'], ['limit', '1e2'], ['limit', '2.5'], ['page', '0'], ['page', 'abc'], ['page_size', '101']]) {
    assertInvalid(await get(`${path}?${name}=${value}`), 'query', name!, `${name}=${value}`);
  }
}

/** HEAD answers like GET, without a body. */
export async function assertHead(get: Get, head: Get, url: string): Promise<void> {
  const [got, headed] = [await get(url), await head(url)];
  assert.equal(headed.statusCode, got.statusCode, url);
  assert.equal(headed.body, '', url);
  assert.match(String(headed.headers['content-type']), /application\/json/, url);
}
