// The reference's official client (`owasp-nest` 0.5.0) against the service listening on 127.0.0.1: its
// 7 snapshot operations, on the bundled data plus records of a month the bundled data leaves empty. The
// client validates every response with its own models, so a sweep over every page of every snapshot
// checks each record the service publishes there.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Nest } from 'owasp-nest';
import { NestError, SnapshotError } from 'owasp-nest/models/errors';
import { refreshSnapshots } from '../src/data/snapshots/snapshots.rebuild.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { chapter, issue, member } from './factories.ts';
import { nestRepositories, release } from './factories-github.ts';
import { project } from './factories-community.ts';

// September 2026 is the current month: every month of the bundled data before it is complete.
const NOW = new Date('2026-09-15T00:00:00Z');
const MONTH = '2012-04';
const on = (day: number, hour = 0) => new Date(Date.UTC(2012, 3, day, hour)).toISOString();

let t: TestApp;
let nest: Nest;

before(async () => {
  // The bundled data from the run's template (instead of an import of its own, ~2.5 s of CPU); its snapshots built
  // again on this file's clock, as an import at NOW builds them.
  t = await buildTestApp({ importBundled: true, env: { REST_AUTH: 'required' } });
  const { db } = t.database;
  await db.deleteFrom('snapshots').execute();
  await refreshSnapshots(db, () => NOW);
  // April 2012: a month the bundled data leaves empty, with two pages of each kind at a page size of 2.
  const { nest: nestRepo, octoNest } = await nestRepositories(db);
  for (let n = 1; n <= 3; n++) {
    await chapter(db, { key: `april-${n}`, created_at: on(n), updated_at: on(10 - n) });
    await project(db, {
      key: `april-${n}`,
      type: (['code', 'other', 'documentation'] as const)[n - 1],
      level: 'lab',
      created_at: on(n),
      updated_at: on(10 - n),
    });
    await member(db, {
      login: `april-${n}`,
      url: `https://github.com/april-${n}`,
      created_at: on(n),
      updated_at: on(10 - n),
    });
    await issue(db, {
      repository_id: n === 2 ? octoNest : nestRepo,
      title: `april ${n}`,
      url: `https://github.com/OWASP/Nest/issues/${n}`,
      created_at: on(n),
      updated_at: on(10 - n),
    });
    await release(db, {
      repository_id: n === 2 ? octoNest : nestRepo,
      tag_name: `april-${n}`,
      published_at: n === 3 ? null : on(n + 5),
      created_at: on(n),
    });
  }
  await refreshSnapshots(db, () => NOW);
  const user = await upsertLocalUser(db, 'snapshot-client');
  const created = await createApiKey(db, String(user.id), 'client', new Date(Date.now() + 86_400_000));
  assert.ok(created.ok);
  const origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  nest = new Nest({ apiKey: created.rawKey, serverURL: origin });
});
after(() => t?.close());

const keys = (items: { key: string }[]) => items.map((item) => item.key);

test('listSnapshots: every completed month with records, newest first, in pages; ordering by start', async () => {
  const stored = await t.database.db.selectFrom('snapshots').select(['key', 'start_at']).orderBy('start_at').execute();
  const all = await nest.community.listSnapshots({ pageSize: 100 });
  assert.equal(all.totalCount, stored.length);
  assert.ok(stored.length > 50, `${stored.length} snapshots`);
  assert.equal(
    all.items.at(-1)!.key,
    stored[0]!.key,
    'built oldest first: the default -created_at ends with the oldest',
  );
  const byStart = await nest.community.listSnapshots({ ordering: 'start_at', pageSize: 100 });
  assert.deepEqual(
    keys(byStart.items),
    stored.map((s) => s.key),
  );
  assert.deepEqual(
    keys((await nest.community.listSnapshots({ ordering: '-start_at', pageSize: 100 })).items),
    stored.map((s) => s.key).reverse(),
  );
  const second = await nest.community.listSnapshots({ ordering: 'start_at', page: 2, pageSize: 5 });
  assert.deepEqual(
    keys(second.items),
    stored.slice(5, 10).map((s) => s.key),
  );
  assert.deepEqual([second.currentPage, second.hasPrevious, second.hasNext], [2, true, true]);
  const april = byStart.items.find((s) => s.key === MONTH)!;
  assert.equal(april.title, 'April 2012 Snapshot');
  assert.deepEqual(
    [april.startAt, april.endAt],
    [new Date('2012-04-01T00:00:00Z'), new Date('2012-04-30T23:59:59.999Z')],
  );
  assert.deepEqual(april.createdAt, NOW);
  assert.ok(!byStart.items.some((s) => s.key >= '2026-09'), 'the current month is not complete');
});

test('getSnapshot: the counts of the month; the typed 404 SnapshotError, on the detail and the sub-lists', async () => {
  const april = await nest.community.getSnapshot({ snapshotId: MONTH });
  assert.deepEqual(
    [
      april.key,
      april.newChaptersCount,
      april.newIssuesCount,
      april.newProjectsCount,
      april.newReleasesCount,
      april.newUsersCount,
    ],
    [MONTH, 3, 3, 3, 3, 3],
  );
  await assert.rejects(nest.community.getSnapshot({ snapshotId: '1999-01' }), (error: unknown) => {
    assert.ok(error instanceof SnapshotError, String(error));
    assert.equal(error.statusCode, 404);
    assert.equal(error.data$.message, 'Snapshot not found');
    return true;
  });
  await assert.rejects(nest.community.listSnapshotIssues({ snapshotId: '1999-01' }), (error: unknown) => {
    assert.ok(error instanceof NestError && error.statusCode === 404, String(error));
    return true;
  });
});

test('listSnapshotChapters and listSnapshotProjects: the month records, orderings, pages', async () => {
  const chapters = await nest.community.listSnapshotChapters({ snapshotId: MONTH });
  assert.deepEqual(keys(chapters.items), ['april-3', 'april-2', 'april-1']);
  assert.deepEqual(
    keys((await nest.community.listSnapshotChapters({ snapshotId: MONTH, ordering: 'created_at' })).items),
    ['april-1', 'april-2', 'april-3'],
  );
  assert.deepEqual(
    keys((await nest.community.listSnapshotChapters({ snapshotId: MONTH, ordering: '-updated_at' })).items),
    ['april-1', 'april-2', 'april-3'],
  );
  const page2 = await nest.community.listSnapshotChapters({ snapshotId: MONTH, page: 2, pageSize: 2 });
  assert.deepEqual([keys(page2.items), page2.totalCount, page2.totalPages, page2.hasNext], [['april-1'], 3, 2, false]);

  const projects = await nest.community.listSnapshotProjects({ snapshotId: MONTH, ordering: 'created_at' });
  assert.deepEqual(
    projects.items.map((p) => [p.key, p.type, p.level]),
    [
      ['april-1', 'code', 'lab'],
      ['april-2', 'other', 'lab'],
      ['april-3', 'documentation', 'lab'],
    ],
  );
  assert.deepEqual(
    keys((await nest.community.listSnapshotProjects({ snapshotId: MONTH, ordering: 'updated_at' })).items),
    ['april-3', 'april-2', 'april-1'],
  );
});

test('listSnapshotMembers, listSnapshotIssues, listSnapshotReleases: content, repository names, orderings', async () => {
  const members = await nest.community.listSnapshotMembers({ snapshotId: MONTH });
  assert.deepEqual(
    members.items.map((m) => [m.login, m.url]),
    [3, 2, 1].map((n) => [`april-${n}`, `https://github.com/april-${n}`]),
  );
  assert.deepEqual(
    (await nest.community.listSnapshotMembers({ snapshotId: MONTH, ordering: 'updated_at' })).items.map((m) => m.login),
    ['april-3', 'april-2', 'april-1'],
  );

  const issues = await nest.community.listSnapshotIssues({ snapshotId: MONTH, ordering: 'created_at' });
  assert.deepEqual(
    issues.items.map((i) => [i.title, i.organizationLogin, i.repositoryName]),
    [
      ['april 1', 'OWASP', 'Nest'],
      ['april 2', null, 'Nest'],
      ['april 3', 'OWASP', 'Nest'],
    ],
  );
  assert.deepEqual(
    (await nest.community.listSnapshotIssues({ snapshotId: MONTH, ordering: '-updated_at', pageSize: 1 })).items.map(
      (i) => i.title,
    ),
    ['april 1'],
  );

  const releases = await nest.community.listSnapshotReleases({ snapshotId: MONTH });
  assert.deepEqual(
    releases.items.map((r) => [r.tagName, r.publishedAt ?? null]),
    [
      ['april-3', null],
      ['april-2', new Date(on(7))],
      ['april-1', new Date(on(6))],
    ],
  );
  assert.deepEqual(
    (await nest.community.listSnapshotReleases({ snapshotId: MONTH, ordering: 'created_at' })).items.map(
      (r) => r.tagName,
    ),
    ['april-1', 'april-2', 'april-3'],
  );
});

test('sweep: every page of every snapshot and of each of its sub-lists validates, and matches its counts', async () => {
  const snapshots = (await nest.community.listSnapshots({ pageSize: 100 })).items;
  assert.ok(snapshots.length > 0);
  let records = 0;
  for (const { key } of snapshots) {
    const detail = await nest.community.getSnapshot({ snapshotId: key });
    const lists = [
      [
        detail.newChaptersCount,
        (page: number) => nest.community.listSnapshotChapters({ snapshotId: key, page, pageSize: 50 }),
      ],
      [
        detail.newIssuesCount,
        (page: number) => nest.community.listSnapshotIssues({ snapshotId: key, page, pageSize: 50 }),
      ],
      [
        detail.newUsersCount,
        (page: number) => nest.community.listSnapshotMembers({ snapshotId: key, page, pageSize: 50 }),
      ],
      [
        detail.newProjectsCount,
        (page: number) => nest.community.listSnapshotProjects({ snapshotId: key, page, pageSize: 50 }),
      ],
      [
        detail.newReleasesCount,
        (page: number) => nest.community.listSnapshotReleases({ snapshotId: key, page, pageSize: 50 }),
      ],
    ] as const;
    let total = 0;
    for (const [count, fetchPage] of lists) {
      let seen = 0;
      for (let page = 1; ; page++) {
        const body = await fetchPage(page);
        seen += body.items.length;
        if (!body.hasNext) break;
      }
      assert.equal(seen, count, key);
      total += seen;
    }
    assert.ok(total > 0, `${key} has no new record`);
    records += total;
  }
  assert.ok(records > 100, `${records} records swept`);
});
