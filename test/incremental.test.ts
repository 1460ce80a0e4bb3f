// Issue 17: incremental consumption. `updated_after`/`updated_before` with the cursor of `Link: next`, and the
// tombstones of `/api/v0/deleted/`: a consumer that mirrors a list across imports that change, add and remove
// records ends with exactly the server's list (docs/incremental.md).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { BUNDLED_DATA_DIR } from '../src/data/import/dataset.import.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';
import { readOwaspData } from '../src/data/owasp/owasp.read.ts';
import { writeOwaspData } from '../src/data/owasp/owasp.write.ts';
import type { OwaspData } from '../src/data/owasp/owasp.types.ts';
import { readGithubData } from '../src/data/import/github/github.read.ts';
import { writeGithubData } from '../src/data/github/github.write.ts';
import type { GithubData } from '../src/data/github/github.records.ts';

type Item = Record<string, unknown>;

let t: TestApp;
let owasp: OwaspData;
let github: GithubData;

before(async () => {
  t = await buildTestApp({ importBundled: true });
  owasp = await readOwaspData(`${BUNDLED_DATA_DIR}/owasp`);
  github = await readGithubData(`${BUNDLED_DATA_DIR}/github`);
});
after(() => t?.close());

async function get(url: string) {
  const res = await t.app.inject({ method: 'GET', url });
  return {
    status: res.statusCode,
    body: res.json() as { items: Item[]; count: number; errors?: { loc: string[] }[]; message?: string },
    link: String(res.headers.link ?? ''),
  };
}

const nextOf = (link: string) => /<([^>]+)>; rel="next"/.exec(link)?.[1];

/** Every item of a list, following `Link: next` (its cursor) from the first page. */
async function walk(url: string): Promise<Item[]> {
  const items: Item[] = [];
  let next: string | undefined = url;
  for (let pages = 0; next; pages++) {
    assert.ok(pages < 1000, 'the walk ends');
    const page = await get(next);
    assert.equal(page.status, 200, `${next}: ${JSON.stringify(page.body)}`);
    items.push(...page.body.items);
    next = nextOf(page.link);
  }
  return items;
}

/** A consumer's copy of one list: records by identity, and where its last run stopped in the list and in the feed. */
class Mirror {
  records = new Map<string, Item>();
  updated?: string;
  deleted?: string;
  constructor(
    private readonly path: string,
    private readonly resource: string,
    private readonly identity: (item: Item) => string,
  ) {}

  /** One run: what left the list since the last run, then what changed in it (in this order: a record can come back). */
  async run(): Promise<void> {
    const since = (param: string, value: string | undefined) => (value ? `&${param}=${encodeURIComponent(value)}` : '');
    for (const gone of await walk(
      `/api/v0/deleted/?resource=${this.resource}&limit=7${since('deleted_after', this.deleted)}`,
    )) {
      this.records.delete(String(gone.key));
      if (!this.deleted || String(gone.deleted_at) > this.deleted) this.deleted = String(gone.deleted_at);
    }
    const sep = this.path.includes('?') ? '&' : '?';
    for (const item of await walk(
      `${this.path}${sep}ordering=updated_at&limit=7${since('updated_after', this.updated)}`,
    )) {
      this.records.set(this.identity(item), item);
      if (!this.updated || String(item.updated_at) > this.updated) this.updated = String(item.updated_at);
    }
  }

  async assertEqualsServer(): Promise<void> {
    const server = await walk(`${this.path}${this.path.includes('?') ? '&' : '?'}limit=100`);
    const sort = (items: Item[]) => items.map((i) => JSON.stringify(i)).sort();
    assert.deepEqual(sort([...this.records.values()]), sort(server));
  }
}

async function changed(write: () => Promise<unknown>): Promise<void> {
  await write();
  t.app.shared.watcher.set(await bumpDataVersion(t.database.db));
}

test('a consumer mirrors the chapters incrementally across imports that change, add and remove chapters', async () => {
  const mirror = new Mirror('/api/v0/chapters/', 'chapters', (item) => String(item.key));
  await mirror.run();
  assert.ok(mirror.records.size > 200, `${mirror.records.size} chapters read`);
  await mirror.assertEqualsServer();

  const active = owasp.chapters.filter((c) => c.isActive && mirror.records.has(c.key));
  const [renamed, removed, deactivated, template] = [active[0]!, active[1]!, active[2]!, active[3]!];
  const later = '2031-01-01T00:00:00.000Z';
  const next: OwaspData = {
    ...owasp,
    chapters: [
      ...owasp.chapters
        .filter((c) => c.key !== removed.key)
        .map((c) => (c.key === renamed.key ? { ...c, name: `${c.name} (renamed)`, updatedAt: later } : c))
        .map((c) => (c.key === deactivated.key ? { ...c, isActive: false, updatedAt: later } : c)),
      { ...template, key: 'incremental-new', name: 'Incremental New', createdAt: later, updatedAt: later },
    ],
  };
  await changed(() => t.database.db.transaction().execute((trx) => writeOwaspData(trx, next)));
  await mirror.run();
  assert.equal(mirror.records.get(renamed.key)?.name, `${renamed.name} (renamed)`);
  assert.ok(mirror.records.has('incremental-new'), 'the added chapter');
  assert.ok(!mirror.records.has(removed.key), 'the chapter that left the files');
  assert.ok(!mirror.records.has(deactivated.key), 'the chapter made inactive');
  await mirror.assertEqualsServer();

  // The original files again: the removed and deactivated chapters come back (the feed forgets them), the new one goes.
  const restored: OwaspData = {
    ...owasp,
    chapters: owasp.chapters.map((c) =>
      [removed.key, deactivated.key, renamed.key].includes(c.key) ? { ...c, updatedAt: '2031-02-01T00:00:00.000Z' } : c,
    ),
  };
  await changed(() => t.database.db.transaction().execute((trx) => writeOwaspData(trx, restored)));
  const feed = await walk('/api/v0/deleted/?resource=chapters');
  assert.deepEqual(
    feed.map((f) => f.key),
    ['incremental-new'],
    'tombstones of the chapters out of the list only',
  );
  await mirror.run();
  await mirror.assertEqualsServer();
  // A run with nothing changed reads only the records at the watermark again.
  const quiet = await get(`/api/v0/chapters/?ordering=updated_at&updated_after=${encodeURIComponent(mirror.updated!)}`);
  assert.ok(quiet.body.count >= 1 && quiet.body.count <= 3, `${quiet.body.count} at the watermark`);
});

test('a consumer mirrors the issues of a repository across a GitHub import that changes and adds issues, and a deletion', async () => {
  const mirror = new Mirror('/api/v0/issues/', 'issues', (item) => String(item.url));
  await mirror.run();
  assert.ok(mirror.records.size > 10, `${mirror.records.size} issues read`);
  await mirror.assertEqualsServer();

  const [first, second] = github.issues;
  const later = '2031-03-01T00:00:00Z';
  const added = {
    ...first!,
    github_id: 990_000_001,
    number: 990_001,
    title: 'Added by the next import',
    url: `${first!.url}-added`,
    updated_at: later,
    created_at: later,
  };
  const next: GithubData = {
    ...github,
    issues: [
      ...github.issues.map((i) =>
        i.github_id === second!.github_id
          ? { ...i, title: 'Changed title', state: 'closed' as const, updated_at: later }
          : i,
      ),
      added,
    ],
  };
  await changed(() => t.database.db.transaction().execute((trx) => writeGithubData(trx, next)));
  // GitHub imports never remove records; a deletion (here by an operator) leaves a tombstone all the same.
  await changed(() => sql`DELETE FROM issues WHERE github_id = ${first!.github_id}`.execute(t.database.db));
  await mirror.run();
  assert.equal(mirror.records.get(second!.url)?.title, 'Changed title');
  assert.ok(mirror.records.has(added.url));
  assert.ok(!mirror.records.has(first!.url));
  await mirror.assertEqualsServer();
});

test('updated_after is inclusive, updated_before exclusive; equal bounds are empty, crossed bounds a 400', async () => {
  const all = await walk('/api/v0/repositories/?ordering=updated_at');
  const pivot = String(all[Math.floor(all.length / 2)]!.updated_at);
  const [from, until] = await Promise.all([
    get(`/api/v0/repositories/?limit=100&updated_after=${pivot}`),
    get(`/api/v0/repositories/?limit=100&updated_before=${pivot}`),
  ]);
  assert.equal(from.body.count, all.filter((r) => String(r.updated_at) >= pivot).length);
  assert.equal(until.body.count, all.filter((r) => String(r.updated_at) < pivot).length);
  assert.equal(from.body.count + until.body.count, all.length, 'the two windows tile the list');
  // The same instant in another zone.
  const shifted = new Date(Date.parse(pivot) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
  assert.equal(
    (await get(`/api/v0/repositories/?updated_after=${encodeURIComponent(shifted)}`)).body.count,
    from.body.count,
  );
  const empty = await get(`/api/v0/repositories/?updated_after=${pivot}&updated_before=${pivot}`);
  assert.equal(empty.status, 200);
  assert.equal(empty.body.count, 0);
  const crossed = await get(
    '/api/v0/repositories/?updated_after=2024-01-02T00:00:00Z&updated_before=2024-01-01T00:00:00Z',
  );
  assert.equal(crossed.status, 400);
  assert.deepEqual(crossed.body.errors?.[0]?.loc, ['query', 'updated_after']);
});

test('a bad date is a 400 with the error body, never a 5xx', async () => {
  const bad = [
    'yesterday',
    '2024-01-01',
    '2024-01-01T00:00:00',
    '2024-13-01T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:00:60Z',
    '99999-01-01T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '2024-01-01T00:00:00+25:00',
    '2024-01-01T00:00:00.1234567Z',
    '1'.repeat(41),
    '2024-01-01T00:00:00Z\u0000',
    '2024-01-01 00:00:00Z',
    '2024-01-01T00:00Z',
  ];
  for (const value of bad) {
    for (const param of ['updated_after', 'updated_before']) {
      const res = await get(`/api/v0/issues/?${param}=${encodeURIComponent(value)}`);
      assert.equal(res.status, 400, `${param}=${value}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.message, 'Invalid request');
      assert.deepEqual(res.body.errors?.[0]?.loc, ['query', param], value);
    }
  }
  // Extreme but real instants answer.
  for (const value of [
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999999Z',
    '2024-02-29T12:00:00-12:00',
    '2024-01-01T00:00:00+14:00',
  ]) {
    assert.equal((await get(`/api/v0/issues/?updated_after=${encodeURIComponent(value)}`)).status, 200, value);
  }
  // Lists without updated_at have no such parameter: ignored like any unknown parameter (the contract), not a window.
  const events = await get('/api/v0/events/?updated_after=2999-01-01T00:00:00Z');
  assert.equal(events.status, 200);
  assert.equal(events.body.count, (await get('/api/v0/events/')).body.count);
  assert.equal((await get('/api/v0/deleted/?deleted_after=nope')).status, 400);
});

test('a cursor is valid only for the filters it was made with', async () => {
  const first = await get('/api/v0/issues/?ordering=updated_at&limit=2&updated_after=2000-01-01T00:00:00Z');
  const cursor = new URL(nextOf(first.link)!, 'http://x').searchParams.get('cursor')!;
  const same = await get(
    `/api/v0/issues/?ordering=updated_at&limit=2&updated_after=2000-01-01T00:00:00Z&cursor=${cursor}`,
  );
  assert.equal(same.status, 200);
  for (const other of ['updated_after=2001-01-01T00:00:00Z', 'state=open', '']) {
    const res = await get(`/api/v0/issues/?ordering=updated_at&limit=2&${other}&cursor=${cursor}`);
    assert.equal(res.status, 400, other);
    assert.deepEqual(res.body.errors?.[0]?.loc, ['query', 'cursor']);
  }
});

test('OpenAPI documents the window on every list with updated_at, and the deleted feed', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v0/openapi.json' })).json() as {
    paths: Record<
      string,
      { get?: { operationId: string; parameters?: { name: string; schema: { format?: string } }[] } }
    >;
  };
  const names = (path: string) => (doc.paths[path]?.get?.parameters ?? []).map((p) => p.name);
  for (const path of [
    '/api/v0/chapters/',
    '/api/v0/issues/',
    '/api/v0/members/',
    '/api/v0/repositories/',
    '/api/v0/organizations/',
    '/api/v0/projects/',
  ]) {
    assert.ok(names(path).includes('updated_after') && names(path).includes('updated_before'), path);
  }
  for (const path of ['/api/v0/events/', '/api/v0/releases/', '/api/v0/sponsors/'])
    assert.ok(!names(path).includes('updated_after'), path);
  assert.equal(doc.paths['/api/v0/deleted/']?.get?.operationId, 'list_deleted');
  assert.ok(names('/api/v0/deleted/').includes('deleted_after'));
});
