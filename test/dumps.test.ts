// Test tier: system (starts the server as a process): `npm run test:system`, CI.
// The bulk dumps through HTTP, on the engine of the run (issue 28, item 1): every line of a dump is the record as its
// detail answers it (byte for byte), a dump holds as many records as its list counts, its checksum is the manifest's;
// a download resumes with Range; a dump is built again after a sync that removes a record, without it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import zlib from 'node:zlib';
import { sql } from 'kysely';
import { ROOT, runCli } from './process.ts';
import { buildNow, downloadDump, manifestOf, startDumpsServer, type DumpsServer } from './dumps-server.ts';
import { buildTestApp } from './app.ts';
import { buildDumps } from '../src/dumps/dumps.build.ts';
import { DUMPS, RESOURCES } from '../src/api/v0/resources.ts';

let server: DumpsServer;
before(async () => {
  server = await startDumpsServer('dumps', { bundled: true });
  await buildNow(server);
});
after(() => server?.stop());

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** The records of a list, every page (the list's own JSON text of each item). */
async function listItems(url: string): Promise<string[]> {
  const items: string[] = [];
  let next: string | undefined = `${url}${url.includes('?') ? '&' : '?'}limit=100`;
  while (next) {
    const res = await server.get(next);
    assert.equal(res.status, 200, next);
    const body = (await res.json()) as { items: unknown[] };
    items.push(...body.items.map((item) => JSON.stringify(item)));
    const link = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    // The `Link` is absolute; the server's get takes a path.
    next = link?.replace(/^https?:\/\/[^/]+/, '');
  }
  return items;
}

async function listCount(url: string): Promise<number> {
  const res = await server.get(`${url}?limit=1`);
  assert.equal(res.status, 200, url);
  return ((await res.json()) as { count: number }).count;
}

const detailPath = (resource: string, params: Record<string, string | number>) =>
  `/api/v0/${resource}/${Object.values(params)
    .map((value) => encodeURIComponent(String(value)))
    .join('/')}`;

test('every resource of the registry declares its dump, named as the resource; no two dumps share a name', () => {
  for (const resource of RESOURCES) {
    // The change log has none: the dumps are the baseline its changes follow (their manifest's last_change_id).
    // `contribute` is a view of the issues (their dump carries what it reads).
    if (resource.name === 'changes' || resource.name === 'contribute') {
      assert.deepEqual(resource.dumps, []);
      continue;
    }
    assert.ok(
      resource.dumps?.some((dump) => dump.resource === resource.name),
      `${resource.name} declares no dump of its own`,
    );
  }
  const names = DUMPS.map((dump) => dump.resource);
  assert.equal(new Set(names).size, names.length, names.join(' '));
});

test('the manifest lists exactly the registry’s dumps, in its order (every resource’s, and the releases the snapshots count)', async () => {
  const items = await manifestOf(server);
  assert.deepEqual(
    items.map((item) => item.resource),
    DUMPS.map((dump) => dump.resource),
  );
  for (const item of items) {
    assert.equal(item.url, `/api/v0/dumps/${item.resource}.ndjson.gz`);
    assert.match(item.sha256, /^[0-9a-f]{64}$/);
    assert.ok(Number.isInteger(item.data_version) && item.data_version > 0, JSON.stringify(item));
    assert.match(item.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  assert.equal((await fetch(`${server.base}/api/v0/dumps/`)).status, 401, 'the key of the API is needed');
});

test('each dump: its checksum and size are the manifest’s, its lines the details, its count the list’s', async () => {
  const items = await manifestOf(server);
  let compared = 0;
  for (const item of items) {
    const { bytes, lines, response } = await downloadDump(server, item);
    assert.equal(response.status, 200, item.resource);
    assert.equal(response.headers.get('content-type'), 'application/gzip');
    assert.equal(response.headers.get('content-encoding'), null, 'served as the file it is, not re-encoded');
    assert.equal(response.headers.get('etag'), `"${item.sha256}"`);
    assert.equal(Number(response.headers.get('content-length')), item.bytes);
    assert.equal(bytes.length, item.bytes, item.resource);
    assert.equal(sha256(bytes), item.sha256, item.resource);
    assert.equal(lines.length, item.records, item.resource);
    const parsed = lines.map(
      (line) => JSON.parse(line) as { params: Record<string, string>; record: unknown; extra?: object },
    );
    for (const [i, line] of parsed.entries()) {
      assert.equal(lines[i], JSON.stringify(line), `${item.resource}: compact JSON, keys params, record (, extra)`);
      // The stored fields the detail leaves out, as the manifest names them (an event's category, …).
      assert.deepEqual(Object.keys(line.extra ?? {}), item.extra_fields, `${item.resource}: extra`);
    }
    if (item.resource === 'snapshot-releases') {
      // The sub-lists of every snapshot, together.
      const snapshots = (await listItems('/api/v0/snapshots/')).map((s) => (JSON.parse(s) as { key: string }).key);
      const expected: string[] = [];
      for (const key of snapshots) expected.push(...(await listItems(`/api/v0/snapshots/${key}/releases/`)));
      assert.deepEqual(parsed.map((line) => JSON.stringify(line.record)).sort(), expected.sort());
      for (const line of parsed) {
        const { snapshot_id, ...release } = line.params;
        const res = await server.get(detailPath('releases', release));
        assert.equal(res.status, 200, `${snapshot_id}: ${JSON.stringify(release)}`);
      }
      continue;
    }
    if (item.resource === 'project-health-history') {
      // Every active project's history, each point as its list gives it, named by the project's key.
      const keys = (await listItems('/api/v0/projects/')).map((p) => (JSON.parse(p) as { key: string }).key);
      const expected: string[] = [];
      for (const key of keys)
        for (const point of await listItems(`/api/v0/projects/${encodeURIComponent(key)}/health/history`))
          expected.push(JSON.stringify({ params: { project_id: key }, record: JSON.parse(point) as unknown }));
      assert.deepEqual([...lines].sort(), expected.sort());
      continue;
    }
    assert.equal(lines.length, await listCount(`/api/v0/${item.resource}/`), `${item.resource}: the list's count`);
    if (item.resource === 'labels' || item.resource === 'deleted') {
      // No detail: the records are the list's items.
      const listed = await listItems(`/api/v0/${item.resource}/`);
      assert.deepEqual(parsed.map((line) => JSON.stringify(line.record)).sort(), listed.sort(), item.resource);
      if (item.resource === 'labels')
        for (const line of parsed) {
          const { organization_id = '', repository_id = '' } = line.params;
          const repository = await server.get(detailPath('repositories', { organization_id, repository_id }));
          assert.equal(repository.status, 200, JSON.stringify(line.params));
        }
      continue;
    }
    for (const line of parsed) {
      const res = await server.get(detailPath(item.resource, line.params));
      const detail = await res.text();
      assert.equal(res.status, 200, `${item.resource} ${JSON.stringify(line.params)}: ${detail}`);
      // Byte for byte: the field order, the timestamps (milliseconds, Z), numbers, nested leaders.
      assert.equal(JSON.stringify(line.record), detail, `${item.resource} ${JSON.stringify(line.params)}`);
      compared++;
    }
  }
  assert.ok(compared > 500, `${compared} records compared with their details`);
});

test('a download resumes with Range (If-Range: the ETag); a stale If-Range gets the whole file; 416 past the end', async () => {
  const item = (await manifestOf(server)).find((candidate) => candidate.resource === 'chapters')!;
  const etag = `"${item.sha256}"`;
  const head = await server.get(item.url, {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(Number(head.headers.get('content-length')), item.bytes);
  assert.equal(head.headers.get('accept-ranges'), 'bytes');
  assert.equal((await head.arrayBuffer()).byteLength, 0);

  const first = await server.get(item.url, { range: 'bytes=0-999' });
  assert.equal(first.status, 206);
  assert.equal(first.headers.get('content-range'), `bytes 0-999/${item.bytes}`);
  const part1 = Buffer.from(await first.arrayBuffer());
  assert.equal(part1.length, 1000);
  const rest = await server.get(item.url, { range: 'bytes=1000-', 'if-range': etag });
  assert.equal(rest.status, 206);
  assert.equal(rest.headers.get('content-range'), `bytes 1000-${item.bytes - 1}/${item.bytes}`);
  const part2 = Buffer.from(await rest.arrayBuffer());
  assert.equal(sha256(Buffer.concat([part1, part2])), item.sha256, 'the two parts make the file');

  const suffix = await server.get(item.url, { range: 'bytes=-10' });
  assert.equal(suffix.status, 206);
  assert.equal((await suffix.arrayBuffer()).byteLength, 10);

  const stale = await server.get(item.url, { range: 'bytes=1000-', 'if-range': '"another"' });
  assert.equal(stale.status, 200, 'the file changed since the first part: all of it');
  assert.equal((await stale.arrayBuffer()).byteLength, item.bytes);

  const past = await server.get(item.url, { range: `bytes=${item.bytes}-` });
  assert.equal(past.status, 416);
  assert.equal(past.headers.get('content-range'), `bytes */${item.bytes}`);
  assert.deepEqual(await past.json(), { message: 'Range not satisfiable' });

  const unchanged = await server.get(item.url, { 'if-none-match': etag });
  assert.equal(unchanged.status, 304);
  assert.equal((await fetch(`${server.base}${item.url}`)).status, 401);
  const unknown = await server.get('/api/v0/dumps/nothing.ndjson.gz');
  assert.equal(unknown.status, 404);
  assert.deepEqual(await unknown.json(), { message: 'Dump not found' });
  assert.equal(first.headers.get('x-cache'), null, 'never from (or into) the response cache');
});

test('a sync that removes a chapter: the dumps are built again in the background, without it', async () => {
  const manifest = await manifestOf(server);
  const before = manifest.find((item) => item.resource === 'chapters')!;
  const issuesBefore = manifest.find((item) => item.resource === 'issues')!;
  const { lines } = await downloadDump(server, before);
  assert.ok(lines.some((line) => line.includes('"chapter_id":"london"')));
  // The website's files without London: the sync makes the chapter inactive (it leaves the list).
  const owasp = path.join(server.dumpsDir, '..', 'owasp-files');
  await fs.cp(path.join(ROOT, 'data', 'owasp'), owasp, { recursive: true });
  const file = path.join(owasp, 'chapters.json');
  const chapters = JSON.parse(await fs.readFile(file, 'utf8')) as { url: string }[];
  await fs.writeFile(file, JSON.stringify(chapters.filter((c) => !c.url.endsWith('/www-chapter-london/'))));
  const synced = await runCli(['sync', 'owasp', '--from', owasp, '--json'], server.env);
  assert.equal(synced.code, 0, synced.stderr);
  await fs.rm(owasp, { recursive: true, force: true });

  // No `cds dumps build`: the server notices the new data version and builds.
  const deadline = Date.now() + 60_000;
  let after = before;
  while (after.sha256 === before.sha256) {
    assert.ok(Date.now() < deadline, `the chapters dump was not rebuilt:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    after = (await manifestOf(server)).find((item) => item.resource === 'chapters')!;
  }
  assert.ok(after.data_version > before.data_version);
  // A website sync touches no table the issues are read from: their file is kept (same bytes, same date).
  const issuesAfter = (await manifestOf(server)).find((item) => item.resource === 'issues')!;
  assert.deepEqual(
    { ...issuesAfter, data_version: 0 },
    { ...issuesBefore, data_version: 0 },
    'the issues dump was kept as it was',
  );
  assert.equal(issuesAfter.data_version, after.data_version);
  const rebuilt = await downloadDump(server, after);
  assert.equal(rebuilt.lines.length, after.records);
  assert.equal(after.records, before.records - 1);
  assert.ok(!rebuilt.lines.some((line) => line.includes('"chapter_id":"london"')), 'London is gone');
  assert.equal(after.records, await listCount('/api/v0/chapters/'));
  const deleted = (await manifestOf(server)).find((item) => item.resource === 'deleted')!;
  const tombstones = (await downloadDump(server, deleted)).lines.map(
    (line) => (JSON.parse(line) as { record: { resource: string; key: string } }).record,
  );
  assert.ok(
    tombstones.some((t) => t.resource === 'chapters' && t.key === 'london'),
    'and its tombstone is there',
  );
  // The old file is gone from the folder; the new one is in it.
  const files = await fs.readdir(server.dumpsDir);
  assert.equal(files.filter((name) => name.startsWith('chapters-')).length, 1, files.join(' '));
  assert.ok(!files.some((name) => name.startsWith('.tmp-')), files.join(' '));
});

test('one download is one request of the rate limit; a folder of another database’s dumps is not served', async () => {
  // In-process apps, on test databases of their own: the running server's folder is another database's.
  const foreign = await buildTestApp({ env: { DUMPS_DIR: server.dumpsDir } });
  try {
    const manifest = await foreign.app.inject({ method: 'GET', url: '/api/v0/dumps/' });
    assert.deepEqual(manifest.json(), {
      status: 'building',
      message: 'The first dumps are being built: ask again after Retry-After seconds.',
      last_change_id: 0,
      items: [],
    });
    assert.equal(
      (await foreign.app.inject({ method: 'GET', url: '/api/v0/dumps/chapters.ndjson.gz' })).statusCode,
      404,
    );
  } finally {
    await foreign.close();
  }
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-dumps-limit-'));
  const t = await buildTestApp({ env: { DUMPS_DIR: dir, RATE_LIMIT_PER_SECOND: '3' }, clock: () => 1_000_000_000 });
  try {
    await buildDumps({ database: t.database, dir, dumps: DUMPS });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v0/dumps/events.ndjson.gz' });
      statuses.push(res.statusCode);
      if (i === 0) assert.equal(res.headers['ratelimit-remaining'], '2');
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  } finally {
    await t.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('the issues dump built in batches of 3 issues (by key and limit on one connection; on a server also between boundaries on two) is the one-batch build’s, byte for byte; an issue’s labels and assignees are its links', async () => {
  const t = await buildTestApp({ importBundled: true });
  const dirs: string[] = [];
  try {
    const { db } = t.database;
    // Labels spelled so that byte order tells them apart, several on some issues, and assignees: each issue's own, read
    // for a batch of issues at once over the batch's range.
    await sql`INSERT INTO labels (github_id, repository_id, name, color)
      SELECT 9000000000000 + r.id * 4 + j, r.id, (ARRAY['zz bug', 'ZZ Bug', 'zz good first issue', 'Ézz'])[j + 1], 'ededed'
      FROM repositories r, generate_series(0, 3) AS j`.execute(db);
    await sql`INSERT INTO issue_labels (issue_id, label_id)
      SELECT i.id, l.id FROM issues i JOIN labels l ON l.repository_id = i.repository_id
      WHERE l.name IN ('zz bug', 'ZZ Bug', 'zz good first issue', 'Ézz') AND i.id % 5 <> 0
        AND (i.id % 3 = 0 OR l.name <> 'zz bug')`.execute(db);
    await sql`INSERT INTO issue_assignees (issue_id, member_id)
      SELECT i.id, m.id FROM issues i JOIN (SELECT id FROM members ORDER BY id LIMIT 3) AS m ON (i.id + m.id) % 2 = 0`.execute(
      db,
    );
    // The issues alone: a batch of 3 of every dump is a statement per 3 records, which the small dumps do not need.
    const issuesDump = DUMPS.filter((dump) => dump.resource === 'issues');
    const builds = [{}, { batchSize: 3, connections: 1 }];
    if (t.database.kind === 'postgres') builds.push({ batchSize: 3, connections: 2 });
    const files: Map<string, string>[] = [];
    for (const options of builds) {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-dumps-batches-'));
      dirs.push(dir);
      await buildDumps({ database: t.database, dir, dumps: issuesDump, ...options });
      const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
        items: { resource: string; file: string; records: number }[];
      };
      assert.ok(manifest.items[0]!.records > 6, 'issues of several batches');
      files.push(new Map(manifest.items.map((item) => [item.resource, item.file])));
    }
    for (const built of files.slice(1)) assert.deepEqual([...built], [...files[0]!]);
    // The lines carry every link once, each issue's names in byte order.
    const issues = zlib
      .gunzipSync(await fs.readFile(path.join(dirs[0]!, files[0]!.get('issues')!)))
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { extra: { labels: string[]; assignees: string[] } }).extra);
    const count = async (table: 'issue_labels' | 'issue_assignees') =>
      Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db)).rows[0]!.n);
    assert.equal(issues.flatMap((extra) => extra.labels).length, await count('issue_labels'));
    assert.equal(issues.flatMap((extra) => extra.assignees).length, await count('issue_assignees'));
    const byteOrder = (names: string[]) => [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const extra of issues) {
      assert.deepEqual(extra.labels, byteOrder(extra.labels));
      assert.deepEqual(extra.assignees, byteOrder(extra.assignees));
    }
    assert.ok(issues.some((extra) => extra.labels.join() === 'ZZ Bug,zz bug,zz good first issue,Ézz'));
    assert.ok(issues.some((extra) => extra.labels.length === 0 && extra.assignees.length > 0));
  } finally {
    await t.close();
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  }
});
