// Issue 12: every filter × ordering of the lists of large tables is read in index order. On a generated
// dataset (tens of thousands of rows, ANALYZE'd), each list request goes through the real app; the
// statement it sends for the page is run again under EXPLAIN (ANALYZE, FORMAT JSON), and its plan may
// neither sort more than one page of rows nor scan a large table sequentially.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql, type LogEvent } from 'kysely';
import { buildApp } from '../../../app.ts';
import { loadConfig } from '../../../config.ts';
import { withIndexesRebuilt } from '../../../data/github/github.queries.ts';
import type { Db } from '../../../db/index.ts';
import { createTestDb, type TestDatabase } from '../../../../test/helpers.ts';

const LARGE = new Set(['issues', 'milestones', 'releases', 'members', 'repositories', 'labels']);
const LIMIT = 100;

let capturing = false;
const captured: CompiledQuery[] = [];
const log = (event: LogEvent) => {
  if (capturing && event.level === 'query') captured.push(event.query);
};

let database: TestDatabase;
let app: Awaited<ReturnType<typeof buildApp>>;

const SEEDED = ['organizations', 'repositories', 'members', 'issues', 'milestones', 'releases', 'labels'];

async function seed(): Promise<void> {
  const { db } = database;
  // Loaded as a first load is (github.write.ts): the tables' secondary indexes and foreign keys built once on the
  // full tables, not kept up row by row (which took about 2 of this file's 10 s of CPU); same definitions. And, as a
  // first import into an empty database is (the change log's baseline, data/base/baseline.queries.ts), without a
  // change recorded for each row: the log's per-row triggers (migration 0014) took ~8 of the seed's 12 s on the
  // embedded database, and the lists' plans do not read the log. On one connection: the setting is the session's.
  await db.connection().execute(async (one) => {
    await sql`SET cds.changes = off`.execute(one);
    await withIndexesRebuilt(one, SEEDED, () => load(one));
    await sql`RESET cds.changes`.execute(one);
  });
  await sql`ANALYZE`.execute(db);
}

async function load(db: Db): Promise<void> {
  // Repository `first` is org-0/big and holds one issue, milestone and release in five.
  await sql`
    INSERT INTO organizations (github_id, login, location, created_at, updated_at)
    SELECT 1000 + g, 'org-' || g, 'city-' || (g % 5), timestamptz '2015-01-01' + g * interval '1 day', timestamptz '2020-01-01' + g * interval '1 day'
    FROM generate_series(0, 49) AS g;
    INSERT INTO repositories (github_id, owner_login, organization_id, name, created_at, updated_at)
    SELECT 2000 + g, 'org-' || (g % 50), o.id, CASE WHEN g = 0 THEN 'big' ELSE 'repo-' || g END,
           timestamptz '2010-01-01' + ((g::bigint * 7919) % 1000) * interval '1 day', timestamptz '2020-01-01' + ((g::bigint * 104729) % 1000) * interval '1 hour'
    FROM generate_series(0, 999) AS g JOIN organizations o ON o.github_id = 1000 + (g % 50)
    ORDER BY g;
    INSERT INTO members (github_id, login, name, company, location, created_at, updated_at)
    SELECT 100000 + g, 'user-' || g, 'User ' || ((g::bigint * 7919) % 20000), 'company-' || (g % 20), 'city-' || (g % 50),
           timestamptz '2010-01-01' + ((g::bigint * 7919) % 20000) * interval '1 hour', timestamptz '2020-01-01' + ((g::bigint * 104729) % 20000) * interval '1 hour'
    FROM generate_series(0, 19999) AS g;
  `.execute(db);
  const first = Number((await sql<{ id: string }>`SELECT min(id) AS id FROM repositories`.execute(db)).rows[0]!.id);
  const repository = (g: string) =>
    sql.raw(`CASE WHEN ${g} % 5 = 0 THEN ${first} ELSE ${first} + 1 + (${g} % 999) END`);
  await sql`
    INSERT INTO issues (github_id, repository_id, number, title, state, created_at, updated_at)
    SELECT 200000 + g, ${repository('g')}, g, 'Issue ' || g, CASE WHEN g % 3 = 0 THEN 'closed' ELSE 'open' END,
           timestamptz '2015-01-01' + ((g::bigint * 7919) % 30000) * interval '1 hour', timestamptz '2020-01-01' + ((g::bigint * 104729) % 30000) * interval '1 hour'
    FROM generate_series(1, 30000) AS g;
    INSERT INTO milestones (github_id, repository_id, number, title, state, created_at, updated_at)
    SELECT 300000 + g, ${repository('g')}, g, 'Milestone ' || g, CASE WHEN g % 3 = 0 THEN 'closed' ELSE 'open' END,
           timestamptz '2015-01-01' + ((g::bigint * 7919) % 10000) * interval '1 hour', timestamptz '2020-01-01' + ((g::bigint * 104729) % 10000) * interval '1 hour'
    FROM generate_series(1, 10000) AS g;
    INSERT INTO releases (github_id, repository_id, tag_name, name, published_at, created_at)
    SELECT 400000 + g, ${repository('g')}, CASE WHEN g % 5 = 0 THEN 'v' || g ELSE 'v1.' || (g / 999) END, 'Release ' || g,
           CASE WHEN g % 97 = 0 THEN NULL ELSE timestamptz '2016-01-01' + ((g::bigint * 7919) % 10000) * interval '1 hour' END,
           timestamptz '2016-01-01' + ((g::bigint * 104729) % 10000) * interval '1 hour'
    FROM generate_series(1, 10000) AS g;
    INSERT INTO labels (github_id, repository_id, name, color)
    SELECT 500000 + g, ${repository('g')}, 'label-' || g, (ARRAY['aaaaaa', 'bbbbbb', 'cccccc', 'dddddd', 'eeeeee'])[1 + g % 5]
    FROM generate_series(1, 10000) AS g;
  `.execute(db);
}

before(async () => {
  // A database of its own (not kept for the next file) with Kysely's query log on.
  database = await createTestDb({ log });
  await seed();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    REST_AUTH: 'optional',
    EDGE_MAX_AGE_S: '0',
    RATE_LIMIT_PER_SECOND: '1000000',
    RESPONSE_CACHE: 'false',
  });
  app = await buildApp({ config, database });
  await app.ready();
});

after(async () => {
  await app?.close();
  await database?.drop();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** What is wrong with the plan of this statement: full sorts and sequential scans of large tables. */
async function planProblems(query: CompiledQuery): Promise<string[]> {
  const result = await database.db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.sql}`, [...query.parameters]),
  );
  const raw = result.rows[0]!['QUERY PLAN'];
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
  const problems: string[] = [];
  const walk = (node: PlanNode) => {
    if (node['Node Type'] === 'Seq Scan' && LARGE.has(node['Relation Name'] ?? ''))
      problems.push(`Seq Scan on ${node['Relation Name']}`);
    if (node['Node Type'] === 'Sort') {
      const input = (node.Plans ?? []).reduce(
        (sum, child) => sum + (child['Actual Rows'] ?? 0) * (child['Actual Loops'] ?? 1),
        0,
      );
      if (input > LIMIT) problems.push(`Sort of ${input} rows`);
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan[0].Plan);
  return problems;
}

const REPOSITORY = { organization: 'org-0', repository: 'big' };

const LISTS: { path: string; fields: string[]; filters: Record<string, string>[] }[] = [
  {
    path: '/api/v0/issues/',
    fields: ['created_at', 'updated_at'],
    filters: [{}, { state: 'open' }, { state: 'closed' }, REPOSITORY, { ...REPOSITORY, state: 'open' }],
  },
  {
    path: '/api/v0/milestones/',
    fields: ['created_at', 'updated_at'],
    filters: [{}, { state: 'open' }, REPOSITORY, { ...REPOSITORY, state: 'closed' }],
  },
  {
    path: '/api/v0/releases/',
    fields: ['published_at', 'created_at'],
    filters: [{}, REPOSITORY, { tag_name: 'v1.0' }],
  },
  {
    path: '/api/v0/members/',
    fields: ['created_at', 'updated_at', 'login', 'name'],
    filters: [{}, { company: 'Company-1' }, { location: 'city-7' }],
  },
  { path: '/api/v0/repositories/', fields: ['created_at', 'updated_at'], filters: [{}, { organization_id: 'org-3' }] },
  { path: '/api/v0/labels/', fields: ['nest_created_at', 'nest_updated_at'], filters: [{}, { color: 'aaaaaa' }] },
];

/** Requests the list, which must list something, and returns the problems of the plan of its page statement. */
async function pageProblems(url: string): Promise<string[]> {
  captured.length = 0;
  capturing = true;
  const res = await app.inject({ method: 'GET', url });
  capturing = false;
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  assert.ok(res.json().items.length > 0, `${url} lists something`);
  const page = captured.find((q) => q.sql.includes('string_agg'));
  assert.ok(page, `${url}: the page statement was captured`);
  return planProblems(page);
}

test('no list query sorts more than a page or scans a large table, for every filter × ordering', async () => {
  const failures: string[] = [];
  let checked = 0;
  for (const list of LISTS) {
    const orderings = [undefined, ...list.fields.flatMap((f) => [f, `-${f}`])];
    for (const filters of list.filters) {
      for (const ordering of orderings) {
        const params = new URLSearchParams({ ...filters, ...(ordering ? { ordering } : {}), limit: String(LIMIT) });
        const url = `${list.path}?${params.toString()}`;
        for (const problem of await pageProblems(url)) failures.push(`${url}: ${problem}`);
        checked++;
      }
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${checked} list queries`);
  assert.ok(checked >= 80, `${checked} list queries checked`);
});

// Issue 17: the incremental read (`ordering=updated_at` with a window, beside each list's filters) is an index range.
// The windows hold many pages of matches. A window so narrow that the planner expects a few rows may be read by a
// bitmap scan and those few rows sorted (seen: 181 members of one company in five months): bounded by the window.
const WINDOWED: { path: string; filters: Record<string, string>[]; from: string; to: string }[] = [
  {
    path: '/api/v0/issues/',
    filters: [{}, { state: 'open' }, REPOSITORY, { ...REPOSITORY, state: 'closed' }],
    from: '2021-06-01T00:00:00Z',
    to: '2022-06-01T00:00:00Z',
  },
  {
    path: '/api/v0/milestones/',
    filters: [{}, { state: 'open' }, REPOSITORY],
    from: '2020-06-01T00:00:00Z',
    to: '2020-12-01T00:00:00Z',
  },
  {
    path: '/api/v0/members/',
    filters: [{}, { company: 'Company-1' }, { location: 'city-7' }],
    from: '2020-06-01T00:00:00Z',
    to: '2022-01-01T00:00:00Z',
  },
  {
    path: '/api/v0/repositories/',
    filters: [{}, { organization_id: 'org-3' }],
    from: '2020-01-10T00:00:00Z',
    to: '2020-02-01T00:00:00Z',
  },
];

test('the incremental read (updated_after/updated_before, ordering by updated_at) neither sorts more than a page nor scans a large table', async () => {
  const failures: string[] = [];
  let checked = 0;
  for (const list of WINDOWED) {
    for (const filters of list.filters) {
      for (const ordering of ['updated_at', '-updated_at']) {
        for (const window of [
          { updated_after: list.from },
          { updated_after: list.from, updated_before: list.to },
        ] as Record<string, string>[]) {
          const params = new URLSearchParams({ ...filters, ...window, ordering, limit: String(LIMIT) });
          const url = `${list.path}?${params.toString()}`;
          for (const problem of await pageProblems(url)) failures.push(`${url}: ${problem}`);
          checked++;
        }
      }
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${checked} windowed list queries`);
  assert.ok(checked >= 40, `${checked} windowed list queries checked`);
});

// Issue 46: a page with no filter value is sent with its limit and offset written in (pagination.ts): a statement of
// no parameter, whose one plan PostgreSQL keeps. With `LIMIT $1` its plan cache never kept the generic plan and planned
// the statement again at every execution. Pages with filter values keep their values (and the limit) as parameters.
test('a page with no filter value is a statement of no parameter, whose plan is kept; filtered pages keep parameters', async () => {
  const statementOf = async (url: string) => {
    captured.length = 0;
    capturing = true;
    const res = await app.inject({ method: 'GET', url });
    capturing = false;
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    const page = captured.find((q) => q.sql.includes('string_agg'));
    assert.ok(page, `${url}: the page statement was captured`);
    return page;
  };
  for (const list of LISTS) {
    for (const query of ['limit=100', 'limit=7&page=3', `ordering=${list.fields[0]}&limit=20`]) {
      const url = `${list.path}?${query}`;
      const page = await statementOf(url);
      assert.deepEqual(page.parameters, [], `${url}: no parameter`);
      // Prepared and executed more than the five custom plans PostgreSQL tries first, on one connection.
      const generic = await database.db.connection().execute(async (connection) => {
        await sql`PREPARE cds_plan_kept AS ${sql.raw(page.sql)}`.execute(connection);
        try {
          for (let i = 0; i < 7; i++) await sql`EXECUTE cds_plan_kept`.execute(connection);
          const { rows } = await sql<{ generic: string | number }>`
            SELECT generic_plans AS generic FROM pg_prepared_statements WHERE name = 'cds_plan_kept'`.execute(
            connection,
          );
          return Number(rows[0]?.generic ?? 0);
        } finally {
          await sql`DEALLOCATE cds_plan_kept`.execute(connection);
        }
      });
      assert.ok(generic > 0, `${url}: PostgreSQL keeps its plan (${generic} executions of the generic plan)`);
    }
    const filtered = list.filters.find((f) => Object.keys(f).length > 0)!;
    const url = `${list.path}?${new URLSearchParams({ ...filtered, limit: '100' }).toString()}`;
    const page = await statementOf(url);
    assert.ok(page.parameters.includes(100), `${url}: the limit is a parameter beside the filter's values`);
  }
});
