// Issue 12: deep pages read from remembered boundaries, and the opaque `cursor` of `Link: next`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import { STEP } from './keyset.ts';

let t: TestApp;
const ISSUES = 1_300;
const RELEASES = 1_100;

before(async () => {
  t = await buildTestApp();
  const { db } = t.database;
  await sql`
    INSERT INTO repositories (github_id, owner_login, name, created_at, updated_at)
    SELECT 10 + g, 'owasp', 'repo-' || g, now(), now() FROM generate_series(0, 3) AS g;
  `.execute(db);
  const first = Number((await sql<{ id: string }>`SELECT min(id) AS id FROM repositories`.execute(db)).rows[0]!.id);
  // Many equal created_at (three issues an hour) and updated_at (ten a day): the id decides between them.
  await sql`
    INSERT INTO issues (github_id, repository_id, number, title, state, created_at, updated_at)
    SELECT 1000 + g, ${first} + g % 4, g, 'issue-' || g, CASE WHEN g % 3 = 0 THEN 'closed' ELSE 'open' END,
           timestamptz '2020-01-01' + (g / 3) * interval '1 hour', timestamptz '2021-01-01' + ((g * 7) % 130) * interval '1 day'
    FROM generate_series(1, ${ISSUES}::int) AS g`.execute(db);
  await sql`
    INSERT INTO releases (github_id, repository_id, tag_name, published_at, created_at)
    SELECT 5000 + g, ${first} + g % 4, 'v' || g,
           CASE WHEN g % 7 = 0 THEN NULL ELSE timestamptz '2020-01-01' + (g / 2) * interval '1 hour' END,
           timestamptz '2019-01-01' + (g % 50) * interval '1 day'
    FROM generate_series(1, ${RELEASES}::int) AS g;
  `.execute(db);
});

after(() => t?.close());

async function get(url: string) {
  return t.app.inject({ method: 'GET', url });
}

/** The `rel="next"` address of a response, if any. */
function nextOf(link: unknown): string | undefined {
  return /<([^>]*)>; rel="next"/.exec(String(link ?? ''))?.[1];
}

/** Every key of a list in an ordering, straight from SQL: the oracle. */
async function expected(table: 'issues' | 'releases', key: string, orderBy: string, where = 'true'): Promise<string[]> {
  const { rows } = await sql<{
    k: string;
  }>`SELECT ${sql.ref(key)} AS k FROM ${sql.table(table)} WHERE ${sql.raw(where)} ORDER BY ${sql.raw(orderBy)}`.execute(
    t.database.db,
  );
  return rows.map((r) => r.k);
}

/** Follows `Link: next` from `url` to the end; `between` runs before each next page. */
async function walk(url: string, key: string, between?: (step: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let next: string | undefined = url;
  for (let step = 0; next; step++) {
    const res = await get(next);
    assert.equal(res.statusCode, 200, `${next}: ${res.body}`);
    seen.push(...res.json().items.map((item: Record<string, string>) => item[key]!));
    next = nextOf(res.headers.link);
    if (next) assert.match(next, /[?&]cursor=[A-Za-z0-9_-]+/);
    await between?.(step);
    assert.ok(step < 1000, 'the walk ends');
  }
  return seen;
}

const ISSUE_ORDERINGS: [string | undefined, string][] = [
  [undefined, 'created_at desc, updated_at desc, id desc'],
  ['created_at', 'created_at, id'],
  ['-updated_at', 'updated_at desc, id desc'],
  ['updated_at,-created_at', 'updated_at, created_at desc, id desc'],
];

test('a cursor walk returns every record once, in the order of the pages, for each ordering', async () => {
  for (const [ordering, orderBy] of ISSUE_ORDERINGS) {
    const query = ordering ? `&ordering=${ordering}` : '';
    const all = await expected('issues', 'title', orderBy);
    assert.deepEqual(await walk(`/api/v0/issues/?limit=97${query}`, 'title'), all, `ordering ${ordering}`);
    const open = await expected('issues', 'title', orderBy, "state = 'open'");
    assert.deepEqual(
      await walk(`/api/v0/issues/?limit=100&state=open${query}`, 'title'),
      open,
      `open, ordering ${ordering}`,
    );
  }
});

test('a cursor walk over a column with NULLs (releases by published_at) returns every record once', async () => {
  for (const ordering of ['published_at', '-published_at', 'published_at,created_at', '-published_at,-created_at']) {
    const orderBy = ordering
      .split(',')
      .map((term) => (term.startsWith('-') ? `${term.slice(1)} desc` : term))
      .concat(ordering.split(',').at(-1)!.startsWith('-') ? 'id desc' : 'id')
      .join(', ');
    const all = await expected('releases', 'tag_name', orderBy);
    assert.deepEqual(await walk(`/api/v0/releases/?limit=90&ordering=${ordering}`, 'tag_name'), all, ordering);
  }
});

test('records added during a walk never make it repeat or skip one that was there', async () => {
  const { db } = t.database;
  const before = new Set(await expected('issues', 'title', 'id'));
  let added = 0;
  const seen = await walk('/api/v0/issues/?limit=100', 'title', async (step) => {
    // Newer than everything, older than everything, and right at the position of the walk.
    await sql`
      INSERT INTO issues (github_id, repository_id, number, title, state, created_at, updated_at)
      SELECT 900000 + ${step} * 3 + g, (SELECT min(id) FROM repositories), 100000 + ${step} * 3 + g, 'added-' || ${step} || '-' || g, 'open',
             (ARRAY[timestamptz '2030-01-01', timestamptz '2000-01-01', timestamptz '2020-01-01' + ${ISSUES - step * 100} / 3 * interval '1 hour'])[g + 1],
             timestamptz '2021-01-01'
      FROM generate_series(0, 2) AS g`.execute(db);
    added += 3;
  });
  assert.equal(new Set(seen).size, seen.length, 'no record twice');
  for (const title of before) assert.ok(seen.includes(title), `${title} is in the walk`);
  assert.ok(
    added > 0 && seen.some((title) => title.startsWith('added-')),
    'records added behind the position are reached',
  );
  await sql`DELETE FROM issues WHERE title LIKE 'added-%'`.execute(db);
  // These writes moved the data version (each records its change): the app hears of it now rather than at its next poll,
  // so that the next test's counts are not those cached while the added issues were there.
  await t.app.shared.watcher.refresh();
});

test('deep pages (past remembered boundaries) are the pages OFFSET would give, in every ordering', async () => {
  assert.ok(ISSUES > STEP * 2, 'the list spans several boundaries');
  for (const [ordering, orderBy] of ISSUE_ORDERINGS) {
    const all = await expected('issues', 'title', orderBy);
    const query = ordering ? `&ordering=${ordering}` : '';
    for (const [page, limit] of [
      [6, 100],
      [13, 100],
      [14, 100],
      [7, 77],
      [9, 90],
      [11, 50],
    ] as const) {
      const res = await get(`/api/v0/issues/?limit=${limit}&page=${page}${query}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(
        body.items.map((i: { title: string }) => i.title),
        all.slice((page - 1) * limit, page * limit),
        `page ${page} of ${limit}, ${ordering}`,
      );
      assert.equal(body.count, ISSUES);
    }
  }
  // Past the last page, after the boundaries: no row to seek to, an empty page (as OFFSET gives).
  for (const [page, limit] of [
    [18, 77],
    [100, 77],
  ] as const) {
    const res = await get(`/api/v0/issues/?limit=${limit}&page=${page}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().items, [], `page ${page} of ${limit}`);
    assert.equal(res.json().count, ISSUES);
  }
  for (const ordering of ['published_at', '-published_at']) {
    const all = await expected(
      'releases',
      'tag_name',
      ordering.startsWith('-') ? 'published_at desc, id desc' : 'published_at, id',
    );
    // Pages of 70 start between boundaries: the rest of the way is sought through the key (NULLs among them).
    for (const [page, limit] of [
      [6, 100],
      [10, 100],
      [11, 100],
      [12, 100],
      [9, 70],
      [15, 70],
    ] as const) {
      const res = await get(`/api/v0/releases/?limit=${limit}&page=${page}&ordering=${ordering}`);
      assert.deepEqual(
        res.json().items.map((i: { tag_name: string }) => i.tag_name),
        all.slice((page - 1) * limit, page * limit),
        `releases page ${page} of ${limit}, ${ordering}`,
      );
    }
  }
});

test('a bad cursor is a 400 with the error body, never a 5xx', async () => {
  const first = await get('/api/v0/issues/?limit=10');
  const good = new URL(nextOf(first.headers.link)!, 'http://x').searchParams.get('cursor')!;
  const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const { o } = JSON.parse(Buffer.from(good, 'base64url').toString()) as { o: string };
  const bad = [
    'not a cursor!',
    'AAAA',
    forge({ o, k: [1] }),
    forge({ o, k: ['not a date', '2021-01-01', 5] }),
    forge({ o, k: [{}, 1, 2] }),
    forge({ o, k: ['2020-01-01', '2020-01-01', null] }),
    forge({ o: 'other', k: ['2020-01-01', '2020-01-01', 5] }),
    forge([1, 2, 3]),
    'x'.repeat(4001),
  ];
  for (const cursor of bad) {
    const res = await get(`/api/v0/issues/?limit=10&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(res.statusCode, 400, `${cursor.slice(0, 40)}: ${res.body}`);
    const body = res.json();
    assert.deepEqual(body.errors[0].loc, ['query', 'cursor'], res.body);
  }
  // A cursor of one ordering is refused in another.
  const other = await get(`/api/v0/issues/?limit=10&ordering=created_at&cursor=${good}`);
  assert.equal(other.statusCode, 400);
  // The same cursor in its own ordering is the second page.
  const second = await get(`/api/v0/issues/?limit=10&cursor=${good}`);
  const page2 = await get('/api/v0/issues/?limit=10&page=2');
  assert.deepEqual(second.json().items, page2.json().items);
});

test('the cursor parameter is documented in OpenAPI', async () => {
  const doc = (await get('/api/v0/openapi.json')).json();
  const parameters = doc.paths['/api/v0/issues/'].get.parameters as { name: string; description?: string }[];
  const cursor = parameters.find((p) => p.name === 'cursor');
  assert.ok(cursor, 'cursor is a parameter of list_issues');
  assert.match(cursor.description ?? '', /Link/);
});
