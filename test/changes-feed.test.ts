// Issue 43: the pull feed of the change log, `GET /api/v0/changes/`, read with a key. The changes are made by real
// writes (the OWASP and GitHub writers with changed copies of the bundled data, a DELETE), then read through the feed:
// its items, filters, every bad input, cursor paging, 304, CSV and `fields`, X-Poll-Interval, and 410 once the
// server's pruning (on the app's clock and timer) has removed what a reader asks for. The log's content per resource
// is the change log's own tests'.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { BUNDLED_DATA_DIR } from '../src/data/import/dataset.import.ts';
import { readDataVersion } from '../src/announcements/counters.queries.ts';
import { readOwaspData } from '../src/data/owasp/owasp.read.ts';
import { writeOwaspData } from '../src/data/owasp/owasp.write.ts';
import type { OwaspData } from '../src/data/owasp/owasp.types.ts';
import { readGithubData } from '../src/data/import/github/github.read.ts';
import { writeGithubData } from '../src/data/github/github.write.ts';
import type { GithubData } from '../src/data/github/github.records.ts';
import { CHANGE_TYPES, RESOURCE_NAMES } from '../src/changes/change-log.ts';

type Change = {
  id: number;
  type: string;
  resource: string;
  key: string;
  occurred_at: string;
  data_version: number;
  changed_fields: string[] | null;
  url: string | null;
};

const FEED = '/api/v0/changes/';
const FIELDS = ['id', 'type', 'resource', 'key', 'occurred_at', 'data_version', 'changed_fields', 'url'];
const DAY = 86_400_000;

let t: TestApp;
let key: string;
let owasp: OwaspData;
let github: GithubData;
// The app's clock (the pruning's "now") and its periodic tasks (the session sweep, the pruning), run by hand.
let now = Date.now();
const tasks: (() => Promise<void>)[] = [];

before(async () => {
  t = await buildTestApp({
    env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required', CHANGES_RETENTION_DAYS: '30' },
    importBundled: true,
    clock: () => now,
    every: (_ms, task) => {
      tasks.push(task);
      return () => {};
    },
  });
  const browser = await devSignIn(t, 'feed-reader');
  const created = await graphql(t, browser, DOC.createApiKey, { name: 'feed', expiresAt: inDays(365) });
  key = created.json().data.createApiKey.rawKey as string;
  owasp = await readOwaspData(`${BUNDLED_DATA_DIR}/owasp`);
  github = await readGithubData(`${BUNDLED_DATA_DIR}/github`);
});
after(() => t?.close());

async function get(url: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });
}

async function page(url: string) {
  const res = await get(url);
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json() as { items: Change[]; count: number; has_next: boolean };
}

const nextOf = (link: unknown) => /<([^>]+)>; rel="next"/.exec(String(link ?? ''))?.[1];

/** Every change a URL gives, following `Link: next` from the first page. */
async function walk(url: string): Promise<Change[]> {
  const items: Change[] = [];
  let next: string | undefined = url;
  for (let pages = 0; next; pages++) {
    assert.ok(pages < 200, 'the walk ends');
    const res = await get(next.replace(/^https?:\/\/[^/]+/, ''));
    assert.equal(res.statusCode, 200, res.body);
    items.push(...(res.json() as { items: Change[] }).items);
    next = nextOf(res.headers.link);
  }
  return items;
}

/** A write, then the app told of the data version it committed (as its poll of the version would, within a second). */
async function written(write: () => Promise<unknown>): Promise<void> {
  await write();
  t.app.shared.watcher.set(await readDataVersion(t.database.db));
}

/** One OWASP sync's worth of chapter changes: one renamed, one gone from the files, one added (all in the list). */
async function changeChapters(suffix: string) {
  const listed = new Set((await get('/api/v0/chapters/?limit=20&fields=key')).json().items.map((c: Change) => c.key));
  const active = owasp.chapters.filter((c) => listed.has(c.key));
  const [renamed, removed, template] = [active[0]!, active[1]!, active[2]!];
  const later = new Date(now).toISOString();
  const next: OwaspData = {
    ...owasp,
    chapters: [
      ...owasp.chapters
        .filter((c) => c.key !== removed.key)
        .map((c) => (c.key === renamed.key ? { ...c, name: `${c.name} ${suffix}`, updatedAt: later } : c)),
      { ...template, key: `feed-new-${suffix}`, name: `Feed New ${suffix}`, createdAt: later, updatedAt: later },
    ],
  };
  await written(() => t.database.db.transaction().execute((trx) => writeOwaspData(trx, next)));
  return { renamed: renamed.key, removed: removed.key, added: `feed-new-${suffix}` };
}

let chapters: Awaited<ReturnType<typeof changeChapters>>;
let changedIssue: string;
let addedIssue: string;
let deletedRelease: string;

test('a bundled first import records nothing; real writes then appear oldest first, each item as the contract says', async () => {
  const empty = await page(FEED);
  assert.equal(empty.count, 0, 'the first import into an empty database is the baseline');
  assert.deepEqual(empty.items, []);

  chapters = await changeChapters('one');
  const [first, second] = github.issues;
  changedIssue = second!.url;
  addedIssue = `${first!.url}-feed`;
  const next: GithubData = {
    ...github,
    issues: [
      ...github.issues.map((i) =>
        i.github_id === second!.github_id ? { ...i, title: 'Changed by the feed test', state: 'closed' as const } : i,
      ),
      { ...first!, github_id: 990_100_001, number: 990_101, title: 'Added', url: addedIssue },
    ],
  };
  await written(() => t.database.db.transaction().execute((trx) => writeGithubData(trx, next)));
  const release = github.releases[0]!;
  await written(() => sql`DELETE FROM releases WHERE github_id = ${release.github_id}`.execute(t.database.db));

  const all = await walk(`${FEED}?limit=100`);
  assert.ok(all.length >= 6, `${all.length} changes`);
  for (const change of all) {
    assert.deepEqual(Object.keys(change), FIELDS);
    assert.ok(Number.isInteger(change.id) && change.id > 0);
    assert.ok(Number.isInteger(change.data_version) && change.data_version > 0);
    assert.match(change.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(CHANGE_TYPES.includes(change.type), change.type);
    assert.equal(change.type.split('.')[1] === 'updated', change.changed_fields !== null, change.type);
  }
  assert.deepEqual(
    all.map((c) => c.id),
    all.map((c) => c.id).sort((a, b) => a - b),
    'oldest first',
  );
  const find = (type: string, key: string) => all.find((c) => c.type === type && c.key === key);
  const renamed = find('chapter.updated', chapters.renamed)!;
  assert.ok(renamed.changed_fields!.includes('name'), JSON.stringify(renamed));
  assert.equal(renamed.url, `/api/v0/chapters/${chapters.renamed}`);
  assert.ok(find('chapter.deleted', chapters.removed));
  const added = find('chapter.created', chapters.added)!;
  assert.ok(find('issue.updated', changedIssue)?.changed_fields?.includes('title'));
  assert.ok(find('issue.created', addedIssue));
  deletedRelease = all.find((c) => c.type === 'release.deleted')!.key;
  assert.match(deletedRelease, new RegExp(`/${github.releases[0]!.tag_name}$`));
  // The url is the detail of the record: the added chapter and the changed issue are there.
  assert.equal((await get(added.url!)).statusCode, 200);
  assert.equal((await get(find('issue.updated', changedIssue)!.url!)).statusCode, 200);
  // A write's changes carry the data version it committed with, one per transaction.
  assert.ok(renamed.data_version < find('issue.updated', changedIssue)!.data_version);
  assert.equal(renamed.data_version, added.data_version);
});

test('filters: after, since, resource and type (repeatable, any case), key with one resource', async () => {
  const all = await walk(`${FEED}?limit=100`);
  const ids = (items: Change[]) => items.map((c) => c.id);
  const pivot = all[Math.floor(all.length / 2)]!;
  assert.deepEqual(ids(await walk(`${FEED}?after=${pivot.id}`)), ids(all.filter((c) => c.id > pivot.id)));
  assert.deepEqual(ids(await walk(`${FEED}?after=0`)), ids(all));
  assert.deepEqual((await page(`${FEED}?after=999999999999999`)).items, []);
  const since = encodeURIComponent(pivot.occurred_at);
  assert.deepEqual(
    ids(await walk(`${FEED}?since=${since}`)),
    ids(all.filter((c) => c.occurred_at >= pivot.occurred_at)),
  );
  // The same instant in another zone.
  const shifted = new Date(Date.parse(pivot.occurred_at) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
  assert.deepEqual(
    ids(await walk(`${FEED}?since=${encodeURIComponent(shifted)}`)),
    ids(await walk(`${FEED}?since=${since}`)),
  );
  assert.deepEqual(ids(await walk(`${FEED}?resource=chapters`)), ids(all.filter((c) => c.resource === 'chapters')));
  assert.deepEqual(
    ids(await walk(`${FEED}?resource=Chapters&resource=releases`)),
    ids(all.filter((c) => ['chapters', 'releases'].includes(c.resource))),
  );
  assert.deepEqual(
    ids(await walk(`${FEED}?type=chapter.created&type=ISSUE.updated`)),
    ids(all.filter((c) => ['chapter.created', 'issue.updated'].includes(c.type))),
  );
  assert.deepEqual(ids(await walk(`${FEED}?resource=chapters&type=issue.created`)), [], 'resource and type both apply');
  const one = await page(`${FEED}?resource=issues&key=${encodeURIComponent(changedIssue)}`);
  assert.deepEqual(
    one.items.map((c) => c.type),
    ['issue.updated'],
  );
  assert.deepEqual(
    (await page(`${FEED}?resource=chapters&key=${chapters.renamed}&type=chapter.updated&after=0`)).items.length,
    all.filter((c) => c.key === chapters.renamed && c.type === 'chapter.updated').length,
  );
  assert.equal((await page(`${FEED}?resource=chapters&key=nobody`)).count, 0);
  // Blank values are absent ones.
  assert.equal((await page(`${FEED}?after=&since=&resource=&type=`)).count, all.length);
  const grouped = (await get(`${FEED}?group_by=resource`)).json() as { groups: { value: string; count: number }[] };
  assert.equal(
    grouped.groups.find((g) => g.value === 'chapters')?.count,
    all.filter((c) => c.resource === 'chapters').length,
  );
});

/** A 400 with the project's body, naming the parameter, whose message includes each of `named`. */
async function assertBad(query: string, name: string, named: readonly string[] = []) {
  const res = await get(`${FEED}?${query}`);
  assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
  const body = res.json() as { message: string; errors: { loc: string[]; msg: string }[] };
  assert.equal(body.message, 'Invalid request');
  const error = body.errors.find((e) => e.loc[0] === 'query' && e.loc[1] === name);
  assert.ok(error, `${query}: ${res.body}`);
  for (const value of named) assert.ok(error.msg.includes(value), `${query}: ${error.msg} names ${value}`);
}

test('every bad input is a 400 naming the parameter; unknown resources and types name the allowed ones', async () => {
  for (const bad of ['-1', 'abc', '1.5', '1e3', '0x10', '99999999999999999999', '%00'])
    await assertBad(`after=${bad}`, 'after');
  for (const bad of ['yesterday', '2026-01-01', '2026-01-01T00:00:00', '2026-02-30T00:00:00Z', 'x'.repeat(41)])
    await assertBad(`since=${encodeURIComponent(bad)}`, 'since');
  await assertBad('resource=snakes', 'resource', RESOURCE_NAMES);
  await assertBad('resource=chapters&resource=snakes', 'resource', RESOURCE_NAMES);
  await assertBad('resource=chapters,events', 'resource', ['chapters', 'releases']);
  await assertBad('resource=deleted', 'resource', ['chapters']);
  await assertBad('type=chapter.renamed', 'type', CHANGE_TYPES);
  await assertBad('type=chapters.created', 'type', ['chapter.created', 'release.deleted']);
  await assertBad(`${CHANGE_TYPES.map((type) => `type=${type}`).join('&')}&type=chapter.created`, 'type');
  await assertBad('key=london', 'key', ['resource']);
  await assertBad('key=london&resource=chapters&resource=events', 'key', ['resource']);
  await assertBad(`key=${'k'.repeat(501)}&resource=chapters`, 'key');
  await assertBad('key=a%00b&resource=chapters', 'key');
  await assertBad(`${RESOURCE_NAMES.map((r) => `resource=${r}`).join('&')}&resource=chapters`, 'resource');
  await assertBad('since=2026-01-01T00:00:00Z&since=2026-01-02T00:00:00Z', 'since');
  await assertBad('after=1&after=2', 'after');
  await assertBad('ordering=occurred_at', 'ordering', ['id']);
  await assertBad('limit=0', 'limit');
  await assertBad('limit=101', 'limit');
  await assertBad('cursor=garbage', 'cursor');
  await assertBad('fields=id,secret', 'fields');
  await assertBad('group_by=key', 'group_by');
});

test('a key is required: 401 without one or with a wrong one, nothing read', async () => {
  for (const headers of [{}, { 'x-api-key': 'cds_wrong' }]) {
    const res = await t.app.inject({ method: 'GET', url: FEED, headers });
    assert.equal(res.statusCode, 401);
    assert.match(res.json().detail, /API key/);
    assert.equal(res.headers['x-poll-interval'], undefined);
  }
});

test('cursor paging: Link next walks every change once, in order, with any page size; X-Poll-Interval on every page', async () => {
  const all = (await page(`${FEED}?limit=100`)).items;
  for (const limit of [1, 2, 5]) {
    const walked = await walk(`${FEED}?limit=${limit}`);
    assert.deepEqual(walked, all, `limit=${limit}`);
  }
  const first = await get(`${FEED}?limit=2`);
  assert.equal(first.headers['x-poll-interval'], '60');
  const next = nextOf(first.headers.link)!;
  assert.match(next, /cursor=/);
  const second = await get(next.replace(/^https?:\/\/[^/]+/, ''));
  assert.equal(second.headers['x-poll-interval'], '60');
  assert.deepEqual(
    (second.json() as { items: Change[] }).items.map((c) => c.id),
    all.slice(2, 4).map((c) => c.id),
  );
  // Newest first is the reverse.
  assert.deepEqual(
    (await walk(`${FEED}?ordering=-id&limit=3`)).map((c) => c.id),
    all.map((c) => c.id).reverse(),
  );
});

test('polling: 304 for an unchanged feed (X-Poll-Interval too); a new change gives a new 200 at once', async () => {
  const url = `${FEED}?resource=chapters&after=0`;
  const fresh = await get(url);
  assert.equal(fresh.statusCode, 200);
  const etag = String(fresh.headers.etag);
  assert.ok(etag.startsWith('"'));
  for (let i = 0; i < 2; i++) {
    // The second is answered from the response cache.
    const again = await get(url, { 'if-none-match': etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal(again.headers['x-poll-interval'], '60');
  }
  const cached = await get(url);
  assert.equal(cached.headers['x-cache'], 'HIT');
  assert.equal(cached.headers['x-poll-interval'], '60');
  assert.equal(cached.body, fresh.body);

  const before = (fresh.json() as { count: number }).count;
  const made = await changeChapters('two');
  const changed = await get(url, { 'if-none-match': etag });
  assert.equal(changed.statusCode, 200, 'the write moved the data version: the cached page is gone');
  assert.notEqual(changed.headers.etag, etag);
  const body = changed.json() as { items: Change[]; count: number };
  assert.ok(body.count > before, `${body.count} > ${before}`);
  assert.ok(body.items.some((c) => c.type === 'chapter.created' && c.key === made.added));
});

test('CSV and fields: the same items, the columns chosen', async () => {
  const json = (await page(`${FEED}?limit=5`)).items;
  const csv = await get(`${FEED}?limit=5`, { accept: 'text/csv' });
  assert.equal(csv.statusCode, 200);
  assert.match(String(csv.headers['content-type']), /^text\/csv/);
  assert.equal(csv.headers['x-poll-interval'], '60');
  const lines = csv.body.trimEnd().split('\r\n');
  assert.equal(lines[0], FIELDS.join(','));
  assert.equal(lines.length, json.length + 1);
  assert.ok(lines[1]!.startsWith(`${json[0]!.id},"${json[0]!.type}","${json[0]!.resource}",`), lines[1]);
  const updated = json.find((c) => c.changed_fields !== null);
  if (updated)
    assert.ok(lines[json.indexOf(updated) + 1]!.includes(JSON.stringify(updated.changed_fields).replace(/"/g, '""')));
  const picked = await get(`${FEED}?limit=5&fields=id,type,key`);
  assert.deepEqual(
    (picked.json() as { items: Record<string, unknown>[] }).items,
    json.map(({ id, type, key }) => ({ id, type, key })),
  );
  const pickedCsv = await get(`${FEED}?limit=5&fields=type,id&format=csv`);
  // The columns in the item's order, whatever the order asked.
  assert.deepEqual(pickedCsv.body.trimEnd().split('\r\n'), ['id,type', ...json.map((c) => `${c.id},"${c.type}"`)]);
});

test('retention: the server prunes on its clock; asking before what is kept is 410 naming the oldest id and the dumps', async () => {
  const all = await walk(`${FEED}?limit=100`);
  const last = all.at(-1)!;
  // Within the retention (30 days here): the pruning removes nothing.
  now += 29 * DAY;
  for (const task of tasks) await task();
  assert.equal((await walk(`${FEED}?limit=100`)).length, all.length);
  // Past it: everything but the last change goes (the last one always stays: the dumps' manifest names it).
  now += 2 * DAY;
  for (const task of tasks) await task();
  await t.app.shared.watcher.refresh();
  const kept = await walk(`${FEED}?limit=100`);
  assert.deepEqual(kept, [last]);

  const gone = async (query: string) => {
    const res = await get(`${FEED}?${query}`);
    assert.equal(res.statusCode, 410, `${query}: ${res.body}`);
    const body = res.json();
    assert.equal(body.oldest_id, last.id);
    assert.equal(body.pruned_through, all.at(-2)!.id);
    assert.equal(body.dumps, '/api/v0/dumps/');
    assert.match(body.message, new RegExp(`oldest kept is ${last.id}.*/api/v0/dumps/`));
    assert.equal(Date.parse(body.pruned_before), now - 30 * DAY);
  };
  // Pages cached before the pruning are gone with it (it moved the data version).
  await gone('after=0');
  await gone(`after=${all[0]!.id}&resource=chapters`);
  await gone(`since=${encodeURIComponent(all[0]!.occurred_at)}`);
  await gone(`since=${encodeURIComponent(all[0]!.occurred_at)}&after=${all[0]!.id}`);
  // A reader that has read everything removed misses nothing: 200.
  assert.deepEqual((await page(`${FEED}?after=${all.at(-2)!.id}`)).items, [last]);
  assert.deepEqual((await page(`${FEED}?after=${last.id}`)).items, []);
  // From the cut-off on: 200 (the last change, kept, is older than it).
  assert.deepEqual(
    (await page(`${FEED}?since=${encodeURIComponent(new Date(now - 30 * DAY).toISOString())}`)).items,
    [],
  );
  // A time since the cut-off, with an old id: nothing removed passes both, 200.
  assert.equal((await get(`${FEED}?after=0&since=${encodeURIComponent(new Date(now).toISOString())}`)).statusCode, 200);
});
