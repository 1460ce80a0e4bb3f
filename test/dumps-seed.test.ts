// Test tier: system (starts servers as processes): `npm run test:system`, CI.
// `cds import --from-dumps` between two servers started here, on the engine of the run (issue 28, item 2): an empty
// instance filled from another's dumps answers the same (every list's count, every detail: its own dumps, built
// again, are the source's byte for byte); a bad key, a source that does not answer, a corrupted file and a target
// that is not empty change nothing. The source's rate limit is low: the import waits out its 429s.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { freePort, runCli } from './process.ts';
import { buildNow, downloadDump, manifestOf, startDumpsServer, type DumpsServer } from './dumps-server.ts';
import { DUMPS, RESOURCES } from '../src/api/v0/resources.ts';
import { NOT_ROW_DUMPS, REQUIRED_EXTRAS, ROW_DUMPS } from '../src/data/import/dumps/dump-rows.queries.ts';
import { extraFields } from '../src/dumps/dumps.build.ts';

let source: DumpsServer;
let target: DumpsServer;
before(async () => {
  [source, target] = await Promise.all([
    startDumpsServer('source', { bundled: true, env: { RATE_LIMIT_PER_SECOND: '6' } }),
    startDumpsServer('target', { bundled: false }),
  ]);
  await buildNow(source);
});
after(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
});

/** Every list: each resource of the registry. */
const LISTS = RESOURCES.map((resource) => resource.name);

const get = (server: DumpsServer, url: string) => server.get(url);

async function counts(server: DumpsServer): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const list of LISTS) {
    const res = await get(server, `/api/v0/${list}/?limit=1`);
    assert.equal(res.status, 200, list);
    found[list] = ((await res.json()) as { count: number }).count;
  }
  return found;
}

const importInto = (server: DumpsServer, from: string, key: string | undefined) =>
  runCli(['import', '--from-dumps', from, '--json'], { ...server.env, CDS_SOURCE_API_KEY: key ?? '' });

async function assertEmpty(server: DumpsServer, after: string): Promise<void> {
  const found = await counts(server);
  assert.deepEqual(
    Object.entries(found).filter(([, n]) => n > 0),
    [],
    `${after}: the target holds no records`,
  );
}

test('the seeding knows every dump of the registry: rows of a table, or declared as what it does instead', () => {
  const seeded = [...ROW_DUMPS, ...Object.keys(NOT_ROW_DUMPS)];
  assert.deepEqual([...seeded].sort(), DUMPS.map((dump) => dump.resource).sort());
  assert.equal(new Set(seeded).size, seeded.length, 'a dump is rows or not, never both');
  // Each stored field a dump carries for the filters (its `extra`) is written back by the seeding, and no other asked.
  for (const dump of DUMPS)
    assert.deepEqual(REQUIRED_EXTRAS[dump.resource] ?? [], extraFields(dump), `${dump.resource}: extra fields`);
});

test('a bad key, no key, a source that does not answer, a bad address: an error that says so, nothing imported', async () => {
  const wrong = await importInto(target, source.base, `cds_${'x'.repeat(43)}abcdef`);
  assert.equal(wrong.code, 1, wrong.stderr);
  assert.match(wrong.stderr, /refused the key of CDS_SOURCE_API_KEY \(HTTP 401\)/);
  const none = await importInto(target, source.base, undefined);
  assert.equal(none.code, 1, none.stderr);
  assert.match(none.stderr, /needs an API key \(HTTP 401\): set CDS_SOURCE_API_KEY/);
  const nobody = `http://127.0.0.1:${await freePort()}`;
  const unreachable = await importInto(target, nobody, source.key);
  assert.equal(unreachable.code, 1, unreachable.stderr);
  assert.match(unreachable.stderr, /cannot reach the source: ECONNREFUSED/);
  const notUrl = await importInto(target, 'ftp://example.org', source.key);
  assert.equal(notUrl.code, 2, notUrl.stderr);
  assert.match(notUrl.stderr, /--from-dumps needs the http\(s\) address/);
  await assertEmpty(target, 'after the failures');
});

test('a corrupted file: a checksum mismatch, nothing imported', async () => {
  const manifest = JSON.parse(await fs.readFile(path.join(source.dumpsDir, 'manifest.json'), 'utf8')) as {
    items: { resource: string; file: string }[];
  };
  // Issues: read after organizations, members, repositories, labels and milestones were written.
  const file = path.join(source.dumpsDir, manifest.items.find((item) => item.resource === 'issues')!.file);
  const original = await fs.readFile(file);
  const corrupted = Buffer.from(original);
  corrupted[Math.floor(corrupted.length / 2)]! ^= 0xff;
  await fs.writeFile(file, corrupted);
  try {
    const result = await importInto(target, source.base, source.key);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /issues\.ndjson\.gz: checksum mismatch/);
  } finally {
    await fs.writeFile(file, original);
  }
  await assertEmpty(target, 'after the corrupted file');
});

test('an empty instance filled from the dumps answers the same: every count, every detail, the same dumps', async () => {
  const imported = await importInto(target, source.base, source.key);
  assert.equal(imported.code, 0, imported.stderr);
  const report = JSON.parse(imported.stdout) as {
    github: Record<string, { inserted: number }>;
    owasp: { counts: Record<string, { inserted: number }> };
    snapshots: { added: number; updated: number; removed: number };
    dumps: { url: string };
  };
  const expected = await counts(source);
  assert.equal(report.github.issues!.inserted, expected.issues);
  assert.equal(report.owasp.counts.chapters!.inserted, expected.chapters);
  assert.deepEqual([report.snapshots.updated, report.snapshots.removed], [0, 0], 'the snapshots were as the source’s');
  assert.deepEqual(await counts(target), expected);

  // Every record: the target's own dumps, built from its rows, are the source's, byte for byte.
  await buildNow(target);
  const mine = new Map((await manifestOf(target)).map((item) => [item.resource, item]));
  const theirs = await manifestOf(source);
  assert.equal(mine.size, theirs.length);
  for (const item of theirs) {
    assert.equal(mine.get(item.resource)?.records, item.records, item.resource);
    assert.equal(mine.get(item.resource)?.sha256, item.sha256, `${item.resource}: the same lines`);
  }
  // And a few details of each kind, asked of the target: each is its dump line's record, which is the source's detail
  // byte for byte (the files are the source's, above; a line's record is its detail: test/dumps.test.ts). Asked of
  // the source itself, the ~100 reads waited out its low rate limit for ~15 s.
  for (const item of theirs) {
    if (['labels', 'deleted', 'snapshot-releases', 'project-health-history'].includes(item.resource)) continue;
    const { lines } = await downloadDump(target, mine.get(item.resource)!);
    for (const line of lines.slice(0, 5)) {
      const { params, record } = JSON.parse(line) as { params: Record<string, string>; record: unknown };
      const url = `/api/v0/${item.resource}/${Object.values(params).map(encodeURIComponent).join('/')}`;
      const answer = await get(target, url);
      assert.equal(answer.status, 200, url);
      assert.equal(await answer.text(), JSON.stringify(record), url);
    }
  }
});

test('a target that is not empty: refused, nothing changed', async () => {
  const before = await counts(target);
  const again = await importInto(target, source.base, source.key);
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /the database is not empty \(chapters has records\)/);
  assert.deepEqual(await counts(target), before);
});
