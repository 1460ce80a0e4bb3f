// Issue 46: a list page's statements are compiled once per shape and then sent with each request's values
// (page-statements.ts). Through the app, requests of one shape with other values (filters, limit, page, cursor) and
// of shapes whose values change the text (a boolean filter, the number of labels) each answer their own records: the
// order and the count read straight from SQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';

let t: TestApp;
const ISSUES = 90;

before(async () => {
  t = await buildTestApp();
  const { db } = t.database;
  await sql`
    INSERT INTO repositories (github_id, owner_login, name, created_at, updated_at)
    VALUES (11, 'owasp', 'alpha', now(), now()), (12, 'owasp', 'beta', now(), now()), (13, 'other', 'gamma', now(), now())
  `.execute(db);
  // Ties on created_at (two issues an hour) and on updated_at: the id decides between them.
  await sql`
    INSERT INTO issues (github_id, repository_id, number, title, state, comments_count, created_at, updated_at)
    SELECT 1000 + g, r.id, g, 'issue-' || g, CASE WHEN g % 3 = 0 THEN 'closed' ELSE 'open' END, g % 4,
           timestamptz '2020-01-01' + (g / 2) * interval '1 hour', timestamptz '2021-01-01' + (g % 9) * interval '1 day'
    FROM generate_series(1, ${ISSUES}::int) AS g
    JOIN repositories r ON r.github_id = 11 + g % 3`.execute(db);
  await sql`
    INSERT INTO labels (github_id, repository_id, name, color)
    SELECT 100 * r.github_id + n, r.id, l.name, 'ffffff'
    FROM repositories r CROSS JOIN (VALUES (1, 'bug'), (2, 'docs')) AS l (n, name)`.execute(db);
  await sql`
    INSERT INTO issue_labels (issue_id, label_id)
    SELECT i.id, l.id FROM issues i JOIN labels l ON l.repository_id = i.repository_id
    WHERE (l.name = 'bug' AND i.number % 5 = 0) OR (l.name = 'docs' AND i.number % 7 = 0)`.execute(db);
});

after(() => t?.close());

/** The titles of the issues matching `where`, in the list's default order: the oracle. */
async function expected(where: string): Promise<string[]> {
  const { rows } = await sql<{ title: string }>`
    SELECT i.title FROM issues i JOIN repositories r ON r.id = i.repository_id WHERE ${sql.raw(where)}
    ORDER BY i.created_at DESC, i.updated_at DESC, i.id DESC`.execute(t.database.db);
  return rows.map((r) => r.title);
}

async function page(url: string): Promise<{ titles: string[]; count: number; next?: string }> {
  const res = await t.app.inject({ method: 'GET', url });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  const body = res.json() as { items: { title: string }[]; count: number };
  const next = /<([^>]*)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
  return { titles: body.items.map((i) => i.title), count: body.count, ...(next ? { next } : {}) };
}

const LABELLED = (names: string[]) =>
  `i.id IN (SELECT il.issue_id FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE l.name IN (${names
    .map((n) => `'${n}'`)
    .join(', ')}))`;

// Each filter set with the condition that reads the same records; neighbours share a shape with other values, or
// differ only in a value that changes the text.
const CASES: [string, string][] = [
  ['', 'true'],
  ['state=open', "i.state = 'open'"],
  ['state=closed', "i.state = 'closed'"],
  ['organization=owasp', "r.owner_login = 'owasp'"],
  ['organization=other', "r.owner_login = 'other'"],
  ['organization=owasp&state=closed', "r.owner_login = 'owasp' AND i.state = 'closed'"],
  ['organization=other&state=open', "r.owner_login = 'other' AND i.state = 'open'"],
  ['has_comments=true', 'i.comments_count > 0'],
  ['has_comments=false', 'i.comments_count = 0'],
  ['label=bug', LABELLED(['bug'])],
  ['label=docs', LABELLED(['docs'])],
  ['label=bug&label=docs', LABELLED(['bug', 'docs'])],
  ['label=docs&state=closed', `${LABELLED(['docs'])} AND i.state = 'closed'`],
];

test('one shape with other values, and values that change the text: each request answers its own records', async () => {
  for (const [filters, where] of CASES) {
    const all = await expected(where);
    assert.ok(all.length > 0, `${filters}: the data holds records for it`);
    // Pages of one shape with another limit and offset; the first page's count.
    for (const [limit, number] of [
      [7, 1],
      [7, 2],
      [5, 3],
      [100, 1],
    ] as const) {
      const { titles, count } = await page(`/api/v0/issues/?${filters}&limit=${limit}&page=${number}`);
      assert.deepEqual(
        titles,
        all.slice((number - 1) * limit, number * limit),
        `${filters} limit ${limit} page ${number}`,
      );
      assert.equal(count, all.length, `${filters}: count`);
    }
  }
});

test('cursor walks of shapes seen before, with other filters: every record once, in order', async () => {
  for (const [filters, where] of CASES) {
    const seen: string[] = [];
    let next: string | undefined = `/api/v0/issues/?${filters}&limit=4`;
    for (let step = 0; next; step++) {
      const result = await page(next);
      seen.push(...result.titles);
      next = result.next;
      assert.ok(step <= ISSUES, 'the walk ends');
    }
    assert.deepEqual(seen, await expected(where), filters);
  }
});
