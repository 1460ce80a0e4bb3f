// Issue 12: cached totals are dropped per table, counted again in the background, trimmed oldest-first.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import { createTestDb } from '../../../../test/helpers.ts';
import { bumpDataVersion } from '../../../announcements/counters.queries.ts';
import { CountCache } from './counts.ts';
import { tablesOf } from '../../../db/statements.ts';

let t: TestApp;

before(async () => {
  t = await buildTestApp();
  const { db } = t.database;
  await sql`INSERT INTO repositories (github_id, owner_login, name, created_at, updated_at) VALUES (1, 'owasp', 'nest', now(), now())`.execute(
    db,
  );
  await addReleases(3);
  await addMembers(4);
  await publish();
});

after(() => t?.close());

let releases = 0;
async function addReleases(n: number) {
  await sql`
    INSERT INTO releases (github_id, repository_id, tag_name, published_at, created_at)
    SELECT 100 + ${releases} + g, (SELECT id FROM repositories LIMIT 1), 'v' || (${releases} + g), now(), now() FROM generate_series(1, ${n}::int) AS g`.execute(
    t.database.db,
  );
  releases += n;
}

let members = 0;
async function addMembers(n: number) {
  await sql`
    INSERT INTO members (github_id, login, created_at, updated_at)
    SELECT 500 + ${members} + g, 'm' || (${members} + g), now(), now() FROM generate_series(1, ${n}::int) AS g`.execute(
    t.database.db,
  );
  members += n;
}

const count = async (path: string) => {
  const res = await t.app.inject({ method: 'GET', url: path });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().count as number;
};

/** What an import or a sync does after writing: a new data version, seen by the watcher. */
async function publish() {
  await bumpDataVersion(t.database.db);
  await t.app.shared.watcher.refresh();
}

test('a change to releases drops the totals that read releases and keeps the others', async () => {
  assert.equal(await count('/api/v0/releases/'), 3);
  assert.equal(await count('/api/v0/members/'), 4);
  // A member written without moving the version of members: its cached total, if kept, stays at 4.
  await sql`ALTER TABLE members DISABLE TRIGGER cds_table_version`.execute(t.database.db);
  try {
    await addMembers(1);
  } finally {
    await sql`ALTER TABLE members ENABLE TRIGGER cds_table_version`.execute(t.database.db);
  }
  await addReleases(2);
  await publish();
  assert.equal(await count('/api/v0/releases/'), 5, 'releases counted again');
  assert.equal(await count('/api/v0/members/'), 4, 'the total of members was kept');
  // A real change to members drops it.
  await addMembers(1);
  await publish();
  assert.equal(await count('/api/v0/members/'), 6);
  assert.equal(await count('/api/v0/releases/'), 5);
});

test('a filtered total reads the repositories too: a change to them drops it', async () => {
  const url = '/api/v0/releases/?organization=owasp&repository=nest';
  assert.equal(await count(url), 5);
  await sql`UPDATE repositories SET owner_login = 'other'`.execute(t.database.db);
  await publish();
  assert.equal(await count(url), 0);
  await sql`UPDATE repositories SET owner_login = 'owasp'`.execute(t.database.db);
  await publish();
  assert.equal(await count(url), 5);
});

test('totals are trimmed least recently used first, not emptied', async () => {
  const counts = new CountCache(3);
  const counted: string[] = [];
  const total = (key: string) => counts.total(key, ['issues'], () => Promise.resolve((counted.push(key), key.length)));
  for (const key of ['a', 'bb', 'ccc']) await total(key);
  await total('a'); // used again: 'bb' is now the oldest
  await total('dddd');
  assert.equal(counts.size, 3);
  assert.ok(counts.has('a') && counts.has('ccc') && counts.has('dddd') && !counts.has('bb'));
  assert.deepEqual(counted, ['a', 'bb', 'ccc', 'dddd'], 'a cached total is not counted again');
});

test('after a change, cached totals of the changed table are counted again at once; others untouched', async () => {
  const counts = new CountCache();
  let n = 0;
  await counts.total('issues', ['issues'], () => Promise.resolve(++n));
  await counts.total('members', ['members'], () => Promise.resolve(100));
  counts.invalidate(new Set(['issues']), new Set(['issues', 'members']));
  assert.ok(counts.has('issues'), 'being counted again, not dropped');
  assert.equal(await counts.total('issues', ['issues'], () => assert.fail('not counted on the request path')), 2);
  assert.equal(await counts.total('members', ['members'], () => assert.fail('kept')), 100);
  // A total that reads a table without a version goes with any change.
  let x = 0;
  await counts.total('x', ['unversioned'], () => Promise.resolve(++x));
  counts.invalidate(new Set(), new Set(['issues', 'members']));
  assert.equal(await counts.total('x', ['unversioned'], () => assert.fail('counted again in the background')), 2);
  assert.deepEqual(
    tablesOf(
      'select count(*) from "releases" where "releases"."repository_id" in (select id from repositories where x)',
    ),
    ['releases', 'repositories'],
  );
});

test('a change of the data reads the versions of the tables once, however many lists listen', async () => {
  // Every list route (a dozen, and the OGC collections) listens from a plugin context of its own. One reading each
  // took a dozen connections of the serving pool of ten at every change, all at once; in CI a readiness probe during
  // a partition found none left.
  const statements: string[] = [];
  const database = await createTestDb({
    log: (event) => void (event.level === 'query' && statements.push(event.query.sql)),
  });
  const other = await buildTestApp({ sharedDatabase: database });
  try {
    const readings = () => statements.filter((text) => text.includes("'cds_table_version'")).length;
    const atStart = readings();
    await bumpDataVersion(database.db);
    await other.app.shared.watcher.refresh();
    // A list waits for the reading (its total may be counted again), so the reading is over once it answers.
    const res = await other.app.inject({ method: 'GET', url: '/api/v0/releases/' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(readings() - atStart, 1, 'one reading for every list');
    await bumpDataVersion(database.db);
    await other.app.shared.watcher.refresh();
    assert.equal((await other.app.inject({ method: 'GET', url: '/api/v0/members/' })).statusCode, 200);
    assert.equal(readings() - atStart, 2, 'and one more at the next change');
  } finally {
    await other.close();
    await database.drop();
  }
});
