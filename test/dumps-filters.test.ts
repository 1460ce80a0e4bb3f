// Test tier: system (starts two servers as processes): `npm run test:system`, CI.
// A copy seeded from the dumps answers every filter like its source (issue 45, item 6), on the engine of the run: two
// servers, the bundled data on one, `cds import --from-dumps` into the other; then every list of the OpenAPI document
// (the snapshots' sub-lists included, the change log excepted: each instance's own history) is asked with each of its
// filters (values from the source's own answers: each enum value, true and false, the `q` fields of the list's
// structured search, dates, coordinates, group names), each ordering and each group_by, and the ranked search with
// words of the data; both answer the same bytes. A filter the test cannot give a value is a failure: a new filter is
// covered or the test says which. The bundled data has no labelled or assigned issue: the source also syncs, from the
// GitHub stand-in, a few projects' repositories with such issues (dumps-filters.github.ts), one of them assigned to a
// member it does not publish.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './process.ts';
import { buildNow, downloadDump, manifestOf, startDumpsServer, type DumpsServer } from './dumps-server.ts';
import { SEARCH_FIELDS, type FieldType } from '../src/list-filter/filter.fields.ts';
import { profilesOf, startGithubApiStandIn, type GithubApiStandIn } from './github-api-standin.ts';
import { contributeOrganization, UNPUBLISHED } from './dumps-filters.github.ts';

let source: DumpsServer;
let target: DumpsServer;
let standIn: GithubApiStandIn;
/** The projects whose website repositories the GitHub sync adds, with labelled and assigned issues. */
let synced: string[];
before(async () => {
  standIn = await startGithubApiStandIn([]);
  [source, target] = await Promise.all([
    startDumpsServer('filter-source', {
      bundled: true,
      env: { GITHUB_API_URL: standIn.url, GITHUB_TOKEN: 'dumps-filters', SYNC_GITHUB_REQUESTS_PER_MINUTE: '0' },
    }),
    startDumpsServer('filter-copy', { bundled: false }),
  ]);
  // The bundled data has no labelled or assigned issue: a GitHub sync adds some, in repositories of active projects.
  const projects = (await (await source.get('/api/v0/projects/?limit=3')).json()) as { items: { key: string }[] };
  synced = projects.items.map((item) => item.key);
  standIn.organizations.push(contributeOrganization(synced, Date.now()));
  for (const [login, profile] of profilesOf(standIn.organizations)) standIn.profiles.set(login, profile);
  standIn.profiles.delete(UNPUBLISHED);
  const sync = await runCli(['sync', 'github', '--org', 'OWASP'], source.env);
  if (sync.code !== 0) throw new Error(`cds sync github: ${sync.stderr}`);
  await buildNow(source);
  const imported = await runCli(['import', '--from-dumps', source.base, '--json'], {
    ...target.env,
    CDS_SOURCE_API_KEY: source.key,
  });
  if (imported.code !== 0) throw new Error(`cds import --from-dumps: ${imported.stderr}`);
});
after(async () => {
  await Promise.all([source?.stop(), target?.stop(), standIn?.close()]);
});

interface Parameter {
  name: string;
  in: string;
  schema: { type?: string; enum?: string[]; items?: { enum?: string[] } };
}
type Item = Record<string, unknown>;

/** Query parameters that page, shape or format a list: not filters. */
const NOT_FILTERS = new Set(['page', 'limit', 'cursor', 'page_size', 'fields', 'format', 'ordering', 'group_by']);
/** Lists that are not the data: the change log is each instance's own history. */
const NOT_DATA = new Set(['list_changes']);

async function json(server: DumpsServer, url: string): Promise<{ items: Item[]; groups?: { value: unknown }[] }> {
  const res = await server.get(url);
  assert.equal(res.status, 200, `${url}: ${await res.clone().text()}`);
  return (await res.json()) as { items: Item[]; groups?: { value: unknown }[] };
}

const distinct = (values: unknown[], most = 3) =>
  [...new Set(values.filter((v) => v !== null && v !== undefined && v !== ''))].slice(0, most);

/** Values of a `q` field of the structured search (docs/search.md) for a list whose items and groups are known. */
function qValues(field: string, type: FieldType, items: Item[], groups: Record<string, unknown[]>): string[] {
  switch (type) {
    case 'number':
      return [`${field}:>0`, `${field}:>=10`, `${field}:<3`];
    case 'boolean':
      return [`${field}:true`, `${field}:false`];
    case 'date':
      return [`${field}:>2020-01-01`, `${field}:<2016-06-01`];
    case 'string': {
      const values = distinct([...(groups[field] ?? []), ...items.map((item) => item[field])]).map(String);
      // Free text too: a substring, and an exact (quoted) value.
      return [...values.map((v) => `${field}:"${v}"`), ...values.map((v) => `${field}:${v.slice(0, 3)}`)];
    }
  }
}

/** Values of the filters that name another resource's records (the contribute filters): read from the source first. */
const known: Record<'language' | 'project' | 'label', string[]> = { language: [], project: [], label: [] };

/** The values of a filter, from the source's own answers; undefined when the test knows none. */
function filterValues(
  list: string,
  parameter: Parameter,
  items: Item[],
  groups: Record<string, unknown[]>,
): string[] | undefined {
  const { name, schema } = parameter;
  const enumerated = schema.enum ?? schema.items?.enum;
  if (enumerated) return enumerated;
  if (schema.type === 'boolean') return ['true', 'false'];
  if (name === 'language' || name === 'project' || name === 'label') return known[name];
  if (name === 'min_population') return ['100000', '1000000', '5000000'];
  if (name === 'q') {
    const spec = SEARCH_FIELDS[list as keyof typeof SEARCH_FIELDS];
    if (!spec) return undefined;
    const words = distinct(
      items.flatMap((item) => String(item[spec.defaultField] ?? '').split(/\s+/)),
      2,
    ).map(String);
    return [
      ...words,
      ...Object.entries(spec.fields).flatMap(([field, type]) => qValues(field, type as FieldType, items, groups)),
    ];
  }
  const bound = /^(.*)_(gte|lte)$/.exec(name);
  if (bound && schema.type === 'number') {
    const numbers = items.map((item) => item[bound[1]!]).filter((v): v is number => typeof v === 'number');
    if (numbers.length === 0) return undefined;
    numbers.sort((a, b) => a - b);
    return [String(numbers[Math.floor(numbers.length / 2)])];
  }
  const window = /^(updated|deleted)_(after|before)$/.exec(name);
  if (window) {
    const dates = items.map((item) => item[`${window[1]}_at`]).filter((v): v is string => typeof v === 'string');
    if (dates.length === 0) return ['2020-01-01T00:00:00Z'];
    dates.sort();
    return [dates[Math.floor(dates.length / 2)]!];
  }
  // A project's health history: its days.
  if (name === 'since' || name === 'until') {
    const days = distinct(items.map((item) => item.day)).map(String);
    return days.length > 0 ? days : ['2020-01-01'];
  }
  if (name === 'near') {
    const placed = items.find((item) => typeof item.latitude === 'number' && typeof item.longitude === 'number');
    return placed ? [`${String(placed.latitude)},${String(placed.longitude)}&radius_km=1500`] : undefined;
  }
  if (name === 'radius_km') return []; // asked with `near`
  // A text filter: the values of the item field, or of the group of that name (`organization_id`: the organization).
  const group = groups[name] ?? groups[name.replace(/_id$/, '')];
  const values = distinct([...(group ?? []), ...items.map((item) => item[name])]);
  if (values.length > 0) return values.map(String);
  // A text filter of a field the bundled data leaves empty everywhere (members' company): both count none.
  return schema.type === 'string' && groups[name] ? ['OWASP'] : undefined;
}

test('every list filter, ordering and group_by, and the search: the copy answers as its source', async () => {
  const doc = (await (await source.get('/api/v0/openapi.json')).json()) as {
    paths: Record<string, { get?: { operationId: string; parameters?: Parameter[] } }>;
  };
  const snapshot = (await json(source, '/api/v0/snapshots/?limit=1&ordering=-start_at')).items[0]!.key as string;
  const values = async (url: string, pick: (item: Item) => unknown) =>
    distinct((await json(source, url)).items.map(pick)).map(String);
  // The synced repositories' languages and projects first (contribute answers only in those).
  known.language = distinct(
    ['Python', 'go', ...(await json(source, '/api/v0/repositories/?group_by=language')).groups!.map((g) => g.value)],
    4,
  ).map(String);
  known.project = distinct([...synced, ...(await values('/api/v0/projects/?limit=100', (item) => item.key))], 8).map(
    String,
  );
  // The labels as their many spellings name them: `good first issue`, `Good-First-Issue` are one.
  known.label = [
    ...(await values('/api/v0/labels/?limit=100', (item) => item.name)).slice(0, 8),
    'good-first-issue',
    'Help Wanted',
    'bug',
    'Beginner',
  ];
  // The source holds what the filters tell apart: else this test could not see a copy without labels or assignees.
  const count = async (url: string) => ((await json(source, url)) as unknown as { count: number }).count;
  for (const url of [
    '/api/v0/contribute/',
    '/api/v0/issues/?is_assigned=true',
    '/api/v0/issues/?is_assigned=false&label=bug',
    '/api/v0/issues/?label=good-first-issue&state=open',
    '/api/v0/issues/?has_comments=true&language=go',
  ])
    assert.ok((await count(url)) > 0, `${url}: the source answers none`);
  // A project's own lists (its health history): the highest scored project's.
  const project = (await json(source, '/api/v0/projects/?limit=1&ordering=-health_score')).items[0]!.key as string;
  const urls: string[] = [];
  const uncovered: string[] = [];
  let lists = 0;
  for (const [route, operations] of Object.entries(doc.paths)) {
    const operation = operations.get;
    if (!operation?.operationId.startsWith('list_') || NOT_DATA.has(operation.operationId)) continue;
    lists++;
    const list = route.replace('{snapshot_id}', snapshot).replace('{project_id}', project);
    const resource = /\/api\/v0\/(?:snapshots\/[^/]+\/)?([a-z-]+)\/$/.exec(list)?.[1] ?? '';
    const parameters = (operation.parameters ?? []).filter((p) => p.in === 'query');
    const items = (await json(source, `${list}?limit=100`)).items;
    const groupBy = parameters.find((p) => p.name === 'group_by')?.schema.enum ?? [];
    const groups: Record<string, unknown[]> = {};
    for (const field of groupBy) {
      groups[field] = (await json(source, `${list}?group_by=${field}`)).groups!.map((g) => g.value);
      urls.push(`${list}?group_by=${field}`);
    }
    for (const ordering of parameters.find((p) => p.name === 'ordering')?.schema.enum ?? [])
      urls.push(`${list}?limit=100&ordering=${ordering}`);
    for (const parameter of parameters) {
      if (NOT_FILTERS.has(parameter.name)) continue;
      const values = filterValues(resource, parameter, items, groups);
      if (!values) {
        uncovered.push(`${list} ${parameter.name}`);
        continue;
      }
      for (const value of values) {
        const encoded = parameter.name === 'near' ? value : encodeURIComponent(value);
        urls.push(`${list}?limit=100&${parameter.name}=${encoded}`);
        // And counted by each group: where a filter and a group meet.
        if (groupBy[0]) urls.push(`${list}?${parameter.name}=${encoded}&group_by=${groupBy[0]}`);
      }
    }
  }
  assert.ok(lists >= 19, `the OpenAPI document lists ${lists} lists`);
  assert.deepEqual(uncovered, [], 'filters this test gives no value: teach filterValues');
  // The filters together, and a synced project's issues.
  for (const project of synced)
    urls.push(
      `/api/v0/issues/?limit=100&project=${project}&is_assigned=false&label=help-wanted`,
      `/api/v0/contribute/?project=${project}&label=bug`,
      `/api/v0/contribute/?project=www-project-${project}&language=python`,
    );
  urls.push('/api/v0/issues/?limit=100&state=open&label=good_first_issue&label=beginner&is_assigned=false');
  // The ranked search (not a list of the registry): words of the data, each resource.
  for (const q of ['owasp', 'juice shop', 'zap', 'london', 'securty', 'top 10'])
    for (const resource of ['', '&resource=chapters', '&resource=projects', '&resource=repositories'])
      urls.push(`/api/v0/search/?q=${encodeURIComponent(q)}${resource}`);

  const differ: string[] = [];
  for (const url of urls) {
    const [a, b] = await Promise.all([source.get(url), target.get(url)]);
    const [theirs, mine] = [await a.text(), await b.text()];
    assert.equal(a.status, 200, `${url}: ${theirs}`);
    if (b.status !== a.status || mine !== theirs) {
      const count = (text: string) => (/"count":(\d+)/.exec(text) ?? [])[1];
      differ.push(`${url}: count ${count(theirs)} vs ${count(mine)} (status ${b.status})`);
    }
  }
  assert.ok(urls.length > 300, `${urls.length} requests`);
  assert.deepEqual(differ, [], `${differ.length} of ${urls.length} answers differ`);
});

test("the synced projects' health: the copy takes the source's, whose inputs the dumps lack", async () => {
  const body = async (server: DumpsServer, url: string) => {
    const res = await server.get(url);
    assert.equal(res.status, 200, url);
    return (await res.json()) as Item;
  };
  const buckets: string[] = [];
  for (const key of synced) {
    const theirs = await body(source, `/api/v0/projects/${key}/health`);
    // The detail as the source answers it: its time and data version too (the copy computed nothing).
    assert.deepEqual(await body(target, `/api/v0/projects/${key}/health`), theirs, key);
    const url = `/api/v0/projects/${key}/health/history`;
    assert.deepEqual(await body(target, url), await body(source, url), url);
    const value = (name: string) =>
      (theirs.checks as { name: string; value: unknown }[]).find((check) => check.name === name)?.value;
    // The source's count is of its assignees: the copy's would be every open issue without them.
    assert.equal(value('unassigned_issues_count'), 5, key);
    // Inputs no dump carries: push dates, pull requests, close dates and authors. A copy computing health from what
    // it holds would find them unknown or none.
    assert.ok(typeof value('last_commit_days') === 'number' && (value('last_commit_days') as number) <= 3, key);
    assert.ok((value('total_pull_requests_count') as number) >= 5, key);
    assert.ok((value('open_pull_requests_count') as number) >= 3, key);
    buckets.push(theirs.bucket as string);
    const metrics = theirs.metrics as { time_to_close_days: { closed_issues: number }; issue_authors_365_days: number };
    assert.ok(metrics.time_to_close_days.closed_issues >= 2, key);
    assert.ok(metrics.issue_authors_365_days >= 1, key);
  }
  // They lift a project out of `unhealthy`, where a copy computing health without them leaves it: the lists that read
  // the stored health would differ. The filter, the ranking (both ways) and the facet:
  assert.ok(
    buckets.some((bucket) => bucket !== 'unhealthy'),
    buckets.join(),
  );
  const urls = [
    ...['healthy', 'needs_attention', 'unhealthy'].map(
      (bucket) => `/api/v0/projects/?limit=100&health_bucket=${bucket}`,
    ),
    '/api/v0/projects/?limit=100&ordering=health_score',
    '/api/v0/projects/?limit=100&ordering=-health_score',
    '/api/v0/projects/?limit=1&group_by=health_bucket',
  ];
  for (const url of urls) assert.deepEqual(await body(target, url), await body(source, url), url);
});

test("the copy's own dumps are the source's: each issue's labels and assignees map back exactly", async () => {
  await buildNow(target);
  const mine = new Map((await manifestOf(target)).map((item) => [item.resource, item]));
  for (const item of await manifestOf(source))
    assert.equal(mine.get(item.resource)?.sha256, item.sha256, `${item.resource}: the same lines`);
  const issues = (await manifestOf(source)).find((item) => item.resource === 'issues')!;
  const extras = (await downloadDump(source, issues)).lines.map(
    (line) => (JSON.parse(line) as { extra: { labels: string[]; assignees: string[] } }).extra,
  );
  assert.ok(
    extras.some((extra) => extra.assignees.includes(UNPUBLISHED)),
    'an assignee the source does not publish',
  );
  assert.ok(extras.some((extra) => extra.labels.length > 1));
});
