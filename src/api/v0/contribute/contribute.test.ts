// GET /api/v0/contribute/ and the contribute filters of the issues list (issue 47, item 6), against a model of the
// seeded records computed here: every combination of state, assignee, labels and comments in repositories of one
// project, of two, of none, of an inactive one, and an archived one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { day, issue, member, repository } from '../../../../test/factories.ts';
import { label as labelRow } from '../../../../test/factories-github.ts';
import { assertInvalid } from '../../../../test/lists.ts';
import { useTestApp } from '../../../../test/resources.ts';
import { BEGINNER_LABELS } from './contribute.labels.ts';
import { bumpDataVersion } from '../../../announcements/counters.queries.ts';

interface Repo {
  name: string;
  language: string;
  projects: string[];
  archived?: boolean;
  /** How this repository spells its "good first issue" label. */
  firstIssue: string;
}

const REPOS: Repo[] = [
  { name: 'alpha-code', language: 'Python', projects: ['alpha'], firstIssue: 'good first issue' },
  { name: 'beta-code', language: 'Go', projects: ['beta'], firstIssue: 'Good-First-Issue' },
  { name: 'shared', language: 'JavaScript', projects: ['beta', 'alpha'], firstIssue: 'good_first_issue' },
  { name: 'old', language: 'Python', projects: ['alpha'], archived: true, firstIssue: 'good first issue' },
  { name: 'orphan', language: 'Python', projects: [], firstIssue: 'good first issue' },
  { name: 'gone', language: 'Go', projects: ['gamma'], firstIssue: 'good first issue' },
  { name: 'delta-docs', language: 'Python', projects: ['delta', 'alpha'], firstIssue: 'Good First Issue' },
];
// Ranked by health score, highest first: beta before alpha (a key order would put alpha first); delta, unscored, last.
const PROJECTS = [
  { key: 'alpha', name: 'OWASP Alpha', level: 'flagship', active: true, score: 40 },
  { key: 'beta', name: 'OWASP Beta', level: 'lab', active: true, score: 90 },
  { key: 'gamma', name: 'OWASP Gamma', level: 'production', active: false, score: 99 },
  { key: 'delta', name: 'OWASP Delta', level: 'incubator', active: true, score: null },
] as const;

interface Modelled {
  id: number;
  title: string;
  repo: Repo;
  open: boolean;
  assigned: boolean;
  labels: string[];
  comments: number;
  created: string;
}

const ISSUES = 144;
const model: Modelled[] = [];
const key = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');
const BEGINNER = new Set(BEGINNER_LABELS.map(key));

async function seed(db: Db): Promise<void> {
  for (const p of PROJECTS) {
    const paths = REPOS.filter((r) => r.projects.includes(p.key)).map((r) => `owasp/${r.name}`);
    const { id } = await db
      .insertInto('projects')
      .values({
        key: p.key,
        name: p.name,
        level: p.level,
        is_active: p.active,
        repository_paths: JSON.stringify(paths),
        created_at: day(1),
        updated_at: day(1),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (p.score !== null)
      await db
        .insertInto('project_health')
        .values({
          project_id: id,
          score: p.score,
          bucket: p.score >= 75 ? 'healthy' : 'unhealthy',
          coverage: 1,
          formula: 'nest-compatible-1',
          computed_at: day(2),
          data_version: 1,
          checks: '[]',
          metrics: '{}',
        })
        .execute();
  }
  const someone = await member(db);
  const ids = new Map<Repo, string>();
  const labelIds = new Map<string, number>();
  for (const r of REPOS) {
    const id = await repository(db, {
      owner_login: 'OWASP',
      name: r.name,
      language: r.language,
      is_archived: r.archived ?? false,
    });
    ids.set(r, id);
    for (const name of [r.firstIssue, 'help wanted', 'bug', 'documentation', 'Up-For-Grabs'])
      labelIds.set(`${r.name}\u0000${name}`, await labelRow(db, { repository_id: id, name }));
  }
  for (let i = 0; i < ISSUES; i++) {
    const repo = REPOS[i % REPOS.length]!;
    const labels = [[repo.firstIssue], ['help wanted', 'bug'], ['bug'], ['documentation', 'Up-For-Grabs'], []][i % 5]!;
    const row: Omit<Modelled, 'id'> = {
      title: `Issue ${i}`,
      repo,
      open: i % 4 !== 0,
      assigned: i % 7 === 0,
      labels,
      comments: i % 3,
      // Few distinct days: issues of one instant in several projects, ordered by the project's rank.
      created: day(i % 11),
    };
    const id = await issue(db, {
      repository_id: ids.get(repo)!,
      title: row.title,
      state: row.open ? 'open' : 'closed',
      comments_count: row.comments,
      url: `https://github.com/OWASP/${repo.name}/issues/${i}`,
      created_at: row.created,
      updated_at: row.created,
    });
    model.push({ id: Number(id), ...row });
    if (row.assigned) await db.insertInto('issue_assignees').values({ issue_id: id, member_id: someone }).execute();
    for (const name of labels)
      await db
        .insertInto('issue_labels')
        .values({ issue_id: id, label_id: labelIds.get(`${repo.name}\u0000${name}`)! })
        .execute();
  }
}

const api = useTestApp(seed);
const { get } = api;
const t = {
  get app() {
    return api.t.app;
  },
};

const CONTRIBUTE = '/api/v0/contribute/';
const ISSUES_LIST = '/api/v0/issues/';
const RANK = new Map([
  ['beta', 1],
  ['alpha', 2],
  ['delta', 3],
]);

/** Every page of a list, walked by its `next` links (cursors). */
async function walk(url: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let next: string | undefined = url;
  while (next) {
    const res = await get(next);
    assert.equal(res.statusCode, 200, `${next}: ${res.body.slice(0, 300)}`);
    items.push(...(res.json().items as Record<string, unknown>[]));
    const link = /<http:\/\/localhost:80([^>]*)>; rel="next"/.exec(String(res.headers.link ?? ''));
    next = link?.[1];
  }
  return items;
}

const titles = async (url: string) => (await walk(url)).map((item) => item.title);

interface Filters {
  project?: string;
  level?: string;
  language?: string;
  label?: string[];
}

/** The model's answer: the contract's rule, written out. */
function expected(f: Filters = {}) {
  const rows = model.flatMap((m) => {
    if (!m.open || m.assigned || m.repo.archived) return [];
    if (!m.labels.some((l) => BEGINNER.has(key(l)))) return [];
    if (f.label && !m.labels.some((l) => f.label!.map(key).includes(key(l)))) return [];
    if (f.language && m.repo.language.toLowerCase() !== f.language.toLowerCase()) return [];
    const candidates = PROJECTS.filter(
      (p) =>
        p.active &&
        m.repo.projects.includes(p.key) &&
        (f.project === undefined || p.key === f.project) &&
        (f.level === undefined || p.level === f.level),
    ).sort((a, b) => RANK.get(a.key)! - RANK.get(b.key)!);
    const project = candidates[0];
    return project ? [{ m, project }] : [];
  });
  rows.sort(
    (a, b) =>
      b.m.created.localeCompare(a.m.created) || RANK.get(a.project.key)! - RANK.get(b.project.key)! || a.m.id - b.m.id,
  );
  return rows;
}

const query = (f: Filters) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(f)) for (const v of [value].flat()) params.append(name, String(v));
  return params.toString();
};

test('contribute: open, unassigned, beginner-labelled issues of active projects, newest first then project rank', async () => {
  const want = expected();
  assert.ok(want.length > 20, 'the model has enough issues');
  // Ties of created_at between projects exist, so the second term decides somewhere.
  assert.ok(want.some((r, i) => i > 0 && r.m.created === want[i - 1]!.m.created && r.project !== want[i - 1]!.project));
  const items = await walk(`${CONTRIBUTE}?limit=7`);
  assert.deepEqual(
    items.map((i) => i.title),
    want.map((r) => r.m.title),
  );
  for (const [n, item] of items.entries()) {
    const { m, project } = want[n]!;
    assert.deepEqual(Object.keys(item), [
      'title',
      'url',
      'repository',
      'project',
      'labels',
      'comments_count',
      'created_at',
    ]);
    assert.deepEqual(item.project, { key: project.key, name: project.name, level: project.level });
    assert.equal(item.repository, `OWASP/${m.repo.name}`);
    assert.deepEqual(item.labels, [...m.labels].sort());
    assert.equal(item.comments_count, m.comments);
    assert.equal(item.created_at, m.created);
    assert.equal(item.url, `https://github.com/OWASP/${m.repo.name}/issues/${m.title.slice(6)}`);
  }
  // Page numbers give the same list as the cursors; the envelope counts it.
  const first = (await get(`${CONTRIBUTE}?limit=100`)).json();
  assert.equal(first.count, want.length);
  assert.deepEqual(
    first.items.map((i: { title: string }) => i.title),
    want.slice(0, 100).map((r) => r.m.title),
  );
});

test('contribute: project, level, language and label filters, alone and together', async () => {
  const cases: Filters[] = [
    { project: 'alpha' },
    { project: 'BETA' },
    { project: 'www-project-beta' },
    { project: 'gamma' },
    { project: 'nobody' },
    { level: 'lab' },
    { level: 'FLAGSHIP' },
    { level: 'production' },
    { language: 'python' },
    { language: 'JavaScript', level: 'lab' },
    { label: ['bug'] },
    { label: ['Documentation', 'BUG'] },
    { label: ['good first issue'] },
    { label: ['Good_First-Issue'], project: 'alpha' },
    { label: ['up for grabs'], language: 'go' },
  ];
  for (const f of cases) {
    const model = {
      ...f,
      ...(f.project ? { project: f.project.toLowerCase().replace(/^www-project-/, '') } : {}),
      ...(f.level ? { level: f.level.toLowerCase() } : {}),
    };
    const url = `${CONTRIBUTE}?${query(f)}`;
    assert.deepEqual(
      await titles(`${url}&limit=50`),
      expected(model).map((r) => r.m.title),
      url,
    );
  }
});

test('contribute: every item open, unassigned, labelled; its count equals the issues list with the same filters', async () => {
  const beginner = BEGINNER_LABELS.map((l) => `label=${encodeURIComponent(l)}`).join('&');
  for (const scope of ['project=beta', 'project=beta&language=go', 'project=beta&language=JAVASCRIPT']) {
    const contribute = await get(`${CONTRIBUTE}?${scope}&limit=100`);
    const listed = await get(`${ISSUES_LIST}?${scope}&state=open&is_assigned=false&${beginner}&limit=100`);
    assert.equal(contribute.statusCode, 200);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.equal(contribute.json().count, listed.json().count, scope);
    assert.ok(contribute.json().count > 0, scope);
    assert.deepEqual(
      contribute
        .json()
        .items.map((i: { title: string }) => i.title)
        .sort(),
      listed
        .json()
        .items.map((i: { title: string }) => i.title)
        .sort(),
      scope,
    );
  }
  for (const item of await walk(`${CONTRIBUTE}?limit=100`)) {
    const m = model.find((x) => x.title === item.title)!;
    assert.ok(m.open && !m.assigned, String(item.title));
    assert.ok(
      (item.labels as string[]).some((l) => BEGINNER.has(key(l))),
      String(item.title),
    );
  }
});

test('contribute: fields and CSV', async () => {
  const res = await get(`${CONTRIBUTE}?fields=title,project&limit=2`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(Object.keys(res.json().items[0]), ['title', 'project']);
  const csv = await get(`${CONTRIBUTE}?format=csv&limit=3&fields=title,labels`);
  assert.equal(csv.statusCode, 200);
  assert.match(String(csv.headers['content-type']), /^text\/csv/);
  const lines = csv.body.trim().split('\r\n');
  assert.equal(lines[0], 'title,labels');
  assert.equal(lines.length, 4);
  assert.match(lines[1]!, /^"Issue \d+","\[/);
});

test('contribute: bad input is a 400 naming the parameter', async () => {
  assertInvalid(await get(`${CONTRIBUTE}?level=legendary`), 'query', 'level');
  assert.match((await get(`${CONTRIBUTE}?level=legendary`)).body, /flagship/);
  assertInvalid(await get(`${CONTRIBUTE}?project=${'x'.repeat(201)}`), 'query', 'project');
  assertInvalid(await get(`${CONTRIBUTE}?language=${'x'.repeat(201)}`), 'query', 'language');
  assertInvalid(await get(`${CONTRIBUTE}?label=${'x'.repeat(101)}`), 'query', 'label');
  assertInvalid(await get(`${CONTRIBUTE}?${'label=a&'.repeat(21)}`), 'query', 'label');
  assertInvalid(await get(`${CONTRIBUTE}?label=a%00b`), 'query', 'label');
  assertInvalid(await get(`${CONTRIBUTE}?ordering=stars`), 'query', 'ordering');
  assertInvalid(await get(`${CONTRIBUTE}?fields=title,nope`), 'query', 'fields');
  assertInvalid(await get(`${CONTRIBUTE}?limit=0`), 'query', 'limit');
  assertInvalid(await get(`${CONTRIBUTE}?cursor=bogus`), 'query', 'cursor');
  // Empty values are absent, as on every list.
  assert.equal((await get(`${CONTRIBUTE}?label=&project=&level=`)).json().count, expected().length);
});

test('issues list: label by key, repeatable (either)', async () => {
  const all = model.map((m) => m);
  const byLabels = (names: string[]) =>
    all.filter((m) => m.labels.some((l) => names.map(key).includes(key(l)))).map((m) => m.title);
  for (const spelling of ['good-first-issue', 'Good First Issue', 'good_first_issue', 'GOOD FIRST ISSUE']) {
    const got = await titles(`${ISSUES_LIST}?label=${encodeURIComponent(spelling)}&limit=100`);
    assert.deepEqual(got.sort(), byLabels(['good first issue']).sort(), spelling);
  }
  const either = await titles(`${ISSUES_LIST}?label=documentation&label=help%20wanted&limit=100`);
  assert.deepEqual(either.sort(), byLabels(['documentation', 'help wanted']).sort());
  assert.deepEqual(await titles(`${ISSUES_LIST}?label=nothing`), []);
  assert.equal((await get(`${ISSUES_LIST}?label=&label=`)).json().count, ISSUES);
});

test('issues list: is_assigned, has_comments, language, project', async () => {
  const count = async (q: string) => (await get(`${ISSUES_LIST}?${q}&limit=1`)).json().count as number;
  const n = (keep: (m: Modelled) => boolean) => model.filter(keep).length;
  assert.equal(
    await count('is_assigned=true'),
    n((m) => m.assigned),
  );
  assert.equal(
    await count('is_assigned=no'),
    n((m) => !m.assigned),
  );
  assert.equal(
    await count('has_comments=1'),
    n((m) => m.comments > 0),
  );
  assert.equal(
    await count('has_comments=false'),
    n((m) => m.comments === 0),
  );
  assert.equal(
    await count('language=PYTHON'),
    n((m) => m.repo.language === 'Python'),
  );
  assert.equal(await count('language=cobol'), 0);
  assert.equal(
    await count('project=alpha'),
    n((m) => m.repo.projects.includes('alpha')),
  );
  assert.equal(
    await count('project=www-project-Beta'),
    n((m) => m.repo.projects.includes('beta')),
  );
  // An inactive project names no repositories; an unknown one neither.
  assert.equal(await count('project=gamma'), 0);
  assert.equal(await count('project=nobody'), 0);
  assert.equal(
    await count('project=alpha&state=open&is_assigned=false&has_comments=true&language=python&label=bug'),
    n(
      (m) =>
        m.repo.projects.includes('alpha') &&
        m.open &&
        !m.assigned &&
        m.comments > 0 &&
        m.repo.language === 'Python' &&
        m.labels.includes('bug'),
    ),
  );
});

test('issues list: bad values of the new filters → 400 naming the allowed ones', async () => {
  for (const [name, value] of [
    ['is_assigned', 'maybe'],
    ['has_comments', '2'],
  ] as const) {
    const res = await get(`${ISSUES_LIST}?${name}=${value}`);
    assertInvalid(res, 'query', name, `${name}=${value}`);
    assert.match(res.json().errors[0].msg, /true\/false/);
  }
  assertInvalid(await get(`${ISSUES_LIST}?label=${'x'.repeat(101)}`), 'query', 'label');
  assertInvalid(await get(`${ISSUES_LIST}?${'label=a&'.repeat(21)}`), 'query', 'label');
  assertInvalid(await get(`${ISSUES_LIST}?project=${'x'.repeat(201)}`), 'query', 'project');
  assertInvalid(await get(`${ISSUES_LIST}?language=${'x'.repeat(201)}`), 'query', 'language');
});

test('MCP tool `contribute`: the same issues, by language, project and level; bad arguments refused', async () => {
  const call = async (args: Record<string, unknown>) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'contribute', arguments: args } },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().result as { structuredContent?: Record<string, unknown>; isError?: boolean };
  };
  for (const args of [{}, { language: 'Python' }, { project: 'beta', level: 'lab' }, { level: 'flagship', limit: 3 }]) {
    const { structuredContent } = await call(args);
    const want = expected(args as Filters);
    const items = structuredContent!.items as { title: string }[];
    assert.equal(structuredContent!.count, want.length, JSON.stringify(args));
    assert.deepEqual(
      items.map((i) => i.title),
      want.slice(0, (args as { limit?: number }).limit ?? 10).map((r) => r.m.title),
      JSON.stringify(args),
    );
  }
  for (const args of [{ level: 'legendary' }, { limit: 0 }, { labels: ['x'] }, { language: '' }])
    assert.equal((await call(args)).isError, true, JSON.stringify(args));
});

test('contribute: the candidates follow the issues, labels and assignees as they are written', async () => {
  const db = api.t.database.db;
  // What a sync writes, then the data version moved as a sync ends (the counts and the response cache drop).
  const written = async () => t.app.shared.watcher.set(await bumpDataVersion(db));
  const check = async (step: string) => {
    const want = expected();
    const res = await get(`${CONTRIBUTE}?limit=100`);
    assert.equal(res.json().count, want.length, step);
    assert.deepEqual(
      res.json().items.map((i: { title: string }) => i.title),
      want.map((r) => r.m.title),
      step,
    );
  };
  const listed = () => expected().map((r) => r.m);
  const labelId = async (repo: Repo, name: string) =>
    (
      await db
        .selectFrom('labels')
        .innerJoin('repositories', 'repositories.id', 'labels.repository_id')
        .where('repositories.name', '=', repo.name)
        .where('labels.name', '=', name)
        .select('labels.id')
        .executeTakeFirstOrThrow()
    ).id;

  // Closed, then reopened.
  const closed = listed()[0]!;
  await db.updateTable('issues').set({ state: 'closed' }).where('id', '=', String(closed.id)).execute();
  closed.open = false;
  await written();
  await check('closed');
  await db.updateTable('issues').set({ state: 'open' }).where('id', '=', String(closed.id)).execute();
  closed.open = true;
  await written();
  await check('reopened');

  // Assigned, then unassigned.
  const assigned = listed()[1]!;
  const someone = await member(db);
  await db
    .insertInto('issue_assignees')
    .values({ issue_id: String(assigned.id), member_id: someone })
    .execute();
  assigned.assigned = true;
  await written();
  await check('assigned');
  await db.deleteFrom('issue_assignees').where('issue_id', '=', String(assigned.id)).execute();
  assigned.assigned = false;
  await written();
  await check('unassigned');

  // Its beginner label taken off; a beginner label put on an issue that had none.
  const unlabelled = listed().find((m) => m.labels.length === 1)!;
  await db
    .deleteFrom('issue_labels')
    .where('issue_id', '=', String(unlabelled.id))
    .where('label_id', '=', await labelId(unlabelled.repo, unlabelled.labels[0]!))
    .execute();
  unlabelled.labels = [];
  const labelled = model.find((m) => m.open && !m.assigned && m.labels.length === 0 && !m.repo.archived)!;
  await db
    .insertInto('issue_labels')
    .values({ issue_id: String(labelled.id), label_id: await labelId(labelled.repo, 'help wanted') })
    .execute();
  labelled.labels = ['help wanted'];
  await written();
  await check('labels changed');

  // A label renamed into the beginner labels, and one renamed out of them (every issue carrying them).
  const repo = REPOS[0]!;
  await db
    .updateTable('labels')
    .set({ name: 'Easy Fix' })
    .where('id', '=', await labelId(repo, 'bug'))
    .execute();
  await db
    .updateTable('labels')
    .set({ name: 'wanted' })
    .where('id', '=', await labelId(repo, 'help wanted'))
    .execute();
  const rename = (from: string, to: string) => (m: Modelled) => {
    if (m.repo === repo) m.labels = m.labels.map((l) => (l === from ? to : l));
  };
  model.forEach(rename('bug', 'Easy Fix'));
  model.forEach(rename('help wanted', 'wanted'));
  await written();
  await check('labels renamed');

  // A label deleted (its issue_labels with it), an issue deleted.
  await db
    .deleteFrom('labels')
    .where('id', '=', await labelId(repo, 'Easy Fix'))
    .execute();
  for (const m of model) if (m.repo === repo) m.labels = m.labels.filter((l) => l !== 'Easy Fix');
  const deleted = listed()[2]!;
  await db.deleteFrom('issues').where('id', '=', String(deleted.id)).execute();
  model.splice(model.indexOf(deleted), 1);
  await written();
  await check('deleted');

  // A repository archived, then not: the repositories looked up again (they are remembered by table versions).
  const archived = REPOS[1]!;
  for (const value of [true, false]) {
    await db.updateTable('repositories').set({ is_archived: value }).where('name', '=', archived.name).execute();
    archived.archived = value;
    await written();
    await check(value ? 'archived' : 'unarchived');
  }
});

test("contribute: the database's beginner rule (migration 0019) is BEGINNER_LABELS", async () => {
  const names = [
    ...BEGINNER_LABELS,
    ...BEGINNER_LABELS.map((l) => l.toUpperCase().replaceAll(' ', '-')),
    ...BEGINNER_LABELS.map((l) => `${l} please`),
    'bug',
    'status: help wanted',
    'good first',
    'documentation',
  ];
  const { rows } = await sql<{ name: string; beginner: boolean }>`
    select n.name, cds_is_beginner_label(n.name) as beginner from unnest(${names}::text[]) as n (name)`.execute(
    api.t.database.db,
  );
  assert.deepEqual(
    rows.filter((r) => r.beginner).map((r) => r.name),
    names.filter((n) => BEGINNER.has(key(n))),
  );
});

test('contribute: with more repositories than are sorted (FEW_REPOSITORIES), the walk in creation order answers alike', async () => {
  const db = api.t.database.db;
  const written = async () => t.app.shared.watcher.set(await bumpDataVersion(db));
  const few = await titles(`${CONTRIBUTE}?limit=7`);
  assert.deepEqual(
    few,
    expected().map((r) => r.m.title),
  );
  // 600 more repositories (no issues) named by an active project: the list's repositories pass 500.
  const alpha = await db
    .selectFrom('projects')
    .where('key', '=', 'alpha')
    .select(['id', 'repository_paths'])
    .executeTakeFirstOrThrow();
  const paths = alpha.repository_paths as unknown;
  const kept = (typeof paths === 'string' ? JSON.parse(paths) : paths) as string[];
  await sql`insert into repositories (github_id, owner_login, name, topics, created_at, updated_at)
    select 9000000 + i, 'OWASP', 'walk-' || i, '[]', ${day(1)}, ${day(1)} from generate_series(1, 600) as i`.execute(
    db,
  );
  const more = [...kept, ...Array.from({ length: 600 }, (_, i) => `owasp/walk-${i + 1}`)];
  await db
    .updateTable('projects')
    .set({ repository_paths: JSON.stringify(more) })
    .where('id', '=', alpha.id)
    .execute();
  await written();
  try {
    assert.deepEqual(await titles(`${CONTRIBUTE}?limit=7`), few);
    assert.equal((await get(`${CONTRIBUTE}?limit=100`)).json().count, few.length);
  } finally {
    await db
      .updateTable('projects')
      .set({ repository_paths: JSON.stringify(kept) })
      .where('id', '=', alpha.id)
      .execute();
    await db.deleteFrom('repositories').where('name', 'like', 'walk-%').execute();
    await written();
  }
});
