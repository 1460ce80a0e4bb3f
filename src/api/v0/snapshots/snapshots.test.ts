// The snapshots through HTTP: periods, counts, sub-lists, orderings and pages on records with fixed dates and a
// fixed clock; then how they follow the data: rebuilds, an import, the CLI, and both syncs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../../config.ts';
import type { Db } from '../../../db/index.ts';
import { openConfiguredDatabase } from '../../../startup.ts';
import { BUNDLED_DATA_DIR, importDataset, sourcesFrom } from '../../../data/import/dataset.import.ts';
import { refreshSnapshots } from '../../../data/snapshots/snapshots.rebuild.ts';
import { readDataVersion } from '../../../announcements/counters.queries.ts';
import { syncGithub } from '../../../data/sync/github/github.sync.ts';
import { syncOwasp } from '../../../data/sync/owasp/owasp.sync.ts';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import { chapter, issue, member } from '../../../../test/factories.ts';
import { project } from '../../../../test/factories-community.ts';
import { nestRepositories, release } from '../../../../test/factories-github.ts';
import { FIXTURE_ORGANIZATIONS, useFixtureSync } from '../../../../test/github-api-standin.ts';
import { createTestDb, seedDataDir, type TestDatabase } from '../../../../test/helpers.ts';
import { assertInvalid, assertPagination, bothWays, expectedOrder, keysOf } from '../../../../test/lists.ts';
import { runCli } from '../../../../test/process.ts';
import { assertHead, assertNotFound, useTestApp } from '../../../../test/resources.ts';

// The clock of the seeded app: March 2024 is the current, incomplete month.
const NOW = new Date('2024-03-15T12:00:00Z');
const BUILT = NOW.toISOString();
const at = (iso: string) => new Date(iso).toISOString();

type Row = { id: number } & Record<string, unknown>;
const chapters: Row[] = [];
const projects: Row[] = [];
const members: Row[] = [];
const issues: Row[] = [];
const releases: Row[] = [];

async function seed(db: Db): Promise<void> {
  const { nest, other, octoNest } = await nestRepositories(db);
  const coordinates = { latitude: 51.5, longitude: -0.1 };
  // January 2024: two published chapters, and two that are not (inactive, no coordinates).
  for (const [key, created, updated] of [
    ['jan-a', '2024-01-05T08:00:00Z', '2024-02-10T00:00:00Z'],
    ['jan-b', '2024-01-20T08:00:00Z', '2024-01-21T00:00:00Z'],
  ]) {
    const values = {
      key: key!,
      name: `Chapter ${key}`,
      ...coordinates,
      created_at: at(created!),
      updated_at: at(updated!),
    };
    chapters.push({ id: Number(await chapter(db, values)), ...values });
  }
  await chapter(db, { key: 'jan-inactive', is_active: false, created_at: at('2024-01-10T00:00:00Z') });
  await chapter(db, { key: 'jan-unplaced', latitude: null, created_at: at('2024-01-11T00:00:00Z') });
  await chapter(db, { key: 'mar-current', created_at: at('2024-03-01T00:00:00Z') });
  // Projects of three of the client's four types (the importer maps the website's text to them).
  for (const [key, type, created] of [
    ['code-tool', 'code', '2024-01-03T00:00:00Z'],
    ['untyped', 'other', '2024-01-25T00:00:00Z'],
    ['docs', 'documentation', '2024-01-28T00:00:00Z'],
  ] as const) {
    const row = await project(db, {
      key,
      name: `project ${key}`,
      level: 'lab',
      type,
      created_at: at(created),
      updated_at: at('2024-02-01T00:00:00Z'),
    });
    projects.push({
      id: Number(row.id),
      key: row.key,
      name: row.name,
      level: 'lab',
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    });
  }
  await project(db, { key: 'inactive', is_active: false, created_at: at('2024-01-04T00:00:00Z') });
  // Members: the last microsecond of January is in January; members without dates are in no period.
  for (const [login, created, updated] of [
    ['old-timer', '2023-11-20T10:00:00Z', '2024-01-01T00:00:00Z'],
    ['edge', '2024-01-31T23:59:59.999999Z', '2024-02-01T00:00:00Z'],
  ]) {
    const values = {
      login: login!,
      name: `Name ${login}`,
      avatar_url: `https://avatars.example/${login}`,
      url: `https://github.com/${login}`,
    };
    members.push({
      id: Number(await member(db, { ...values, created_at: created!, updated_at: updated! })),
      ...values,
      created_at: at(created!),
      updated_at: at(updated!),
    });
  }
  await member(db, { login: 'stub', created_at: null, updated_at: null });
  await member(db, { login: 'half-known', created_at: at('2024-01-15T00:00:00Z'), updated_at: null });
  // February 2024: issues from the first instant to the last second, one in a repository without an organization.
  const issueSpecs = [
    [nest, 'Nest', 'OWASP', '2024-02-01T00:00:00Z', '2024-02-03T00:00:00Z'],
    [other, 'Other', 'OWASP', '2024-02-05T00:00:00Z', '2024-02-02T00:00:00Z'],
    [octoNest, 'Nest', null, '2024-02-10T00:00:00Z', '2024-02-12T00:00:00Z'],
    [nest, 'Nest', 'OWASP', '2024-02-10T00:00:00Z', '2024-02-11T00:00:00Z'],
    [nest, 'Nest', 'OWASP', '2024-02-29T23:59:59Z', '2024-03-01T00:00:00Z'],
  ] as const;
  for (const [n, [repository_id, repository_name, organization_login, created, updated]] of issueSpecs.entries()) {
    const values = {
      title: `issue ${n + 1}`,
      state: n % 2 ? ('closed' as const) : ('open' as const),
      url: `https://github.com/x/y/issues/${n + 1}`,
    };
    const id = Number(await issue(db, { repository_id, ...values, created_at: created, updated_at: updated }));
    issues.push({
      id,
      ...values,
      created_at: at(created),
      updated_at: at(updated),
      organization_login,
      repository_name,
    });
  }
  await issue(db, { repository_id: nest, title: 'march', created_at: at('2024-03-01T00:00:00Z') });
  // Releases: January's, February's three (one unpublished), and a draft and a pre-release that never count.
  const releaseSpecs = [
    [nest, 'Nest', 'OWASP', 'v1', '2024-01-10T00:00:00Z', '2024-01-11T00:00:00Z'],
    [nest, 'Nest', 'OWASP', 'v2', '2024-02-03T00:00:00Z', null],
    [octoNest, 'Nest', null, 'v3', '2024-02-02T00:00:00Z', '2024-02-20T00:00:00Z'],
    [other, 'Other', 'OWASP', 'v4', '2024-02-04T00:00:00Z', '2024-02-10T00:00:00Z'],
  ] as const;
  for (const [repository_id, repository_name, organization_login, tag_name, created, published] of releaseSpecs) {
    const values = {
      name: `release ${tag_name}`,
      tag_name,
      published_at: published && at(published),
      created_at: at(created),
    };
    releases.push({
      id: await release(db, { repository_id, ...values }),
      ...values,
      organization_login,
      repository_name,
    });
  }
  await release(db, { repository_id: nest, tag_name: 'draft', is_draft: true, created_at: at('2024-02-06T00:00:00Z') });
  await release(db, {
    repository_id: nest,
    tag_name: 'rc',
    is_prerelease: true,
    created_at: at('2024-02-07T00:00:00Z'),
  });
  await refreshSnapshots(db, () => NOW);
}

const LIST = '/api/v0/snapshots/';
const strip = ({ id: _id, ...rest }: Row) => rest;
const inOrder = (rows: Row[], ordering: string) => expectedOrder(rows, ordering).map(strip);

const PERIODS = {
  '2023-11': {
    title: 'November 2023 Snapshot',
    start_at: '2023-11-01T00:00:00.000Z',
    end_at: '2023-11-30T23:59:59.999Z',
  },
  '2024-01': {
    title: 'January 2024 Snapshot',
    start_at: '2024-01-01T00:00:00.000Z',
    end_at: '2024-01-31T23:59:59.999Z',
  },
  '2024-02': {
    title: 'February 2024 Snapshot',
    start_at: '2024-02-01T00:00:00.000Z',
    end_at: '2024-02-29T23:59:59.999Z',
  },
};
const snapshot = (key: keyof typeof PERIODS) => ({
  created_at: BUILT,
  end_at: PERIODS[key].end_at,
  key,
  start_at: PERIODS[key].start_at,
  title: PERIODS[key].title,
  updated_at: BUILT,
});

describe('snapshots built from records with fixed dates', () => {
  // Its app and database are this suite's: the next suite, which starts empty, gets the database back emptied.
  const api = useTestApp(seed);
  const { get } = api;

  test('one snapshot per completed month with a new record: not the current month, not an empty one', async () => {
    const body = (await get(LIST)).json();
    assert.deepEqual(body.items, [snapshot('2024-02'), snapshot('2024-01'), snapshot('2023-11')]);
    assert.equal(body.count, 3);
    assert.deepEqual(await keysOf(get, `${LIST}?ordering=start_at`), ['2023-11', '2024-01', '2024-02']);
    assert.deepEqual(await keysOf(get, `${LIST}?ordering=-start_at`), ['2024-02', '2024-01', '2023-11']);
    for (const ordering of bothWays(['created_at', 'updated_at'])) {
      assert.equal((await get(`${LIST}?ordering=${ordering}`)).statusCode, 200, ordering);
    }
    assertInvalid(await get(`${LIST}?ordering=key`), 'query', 'ordering');
    assertInvalid(await get(`${LIST}?page=0`), 'query', 'page');
  });

  test('detail: the period and the number of new records of each kind', async () => {
    const res = await get(`${LIST}2024-01`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      ...snapshot('2024-01'),
      new_chapters_count: 2,
      new_issues_count: 0,
      new_projects_count: 3,
      new_releases_count: 1,
      new_users_count: 1,
    });
    const february = (await get(`${LIST}%202024-02%20`)).json();
    assert.deepEqual([february.new_issues_count, february.new_releases_count, february.new_users_count], [5, 3, 0]);
    assert.equal((await get(`${LIST}2023-11`)).json().new_users_count, 1);
  });

  test('unknown snapshot → 404 "Snapshot not found", on the detail and on every sub-list; bad ids → 400', async () => {
    for (const id of ['2024-03', '2023-12', '2099-01', 'latest', '2024-1']) {
      await assertNotFound(
        get,
        LIST,
        [id, ...['chapters', 'issues', 'members', 'projects', 'releases'].map((s) => `${id}/${s}/`)],
        'Snapshot not found',
      );
    }
    assertInvalid(await get(`${LIST}${'9'.repeat(201)}`), 'path', 'snapshot_id');
    assertInvalid(await get(`${LIST}2024-01%00`), 'path', 'snapshot_id');
    assertInvalid(await get(`${LIST}${'9'.repeat(201)}/issues/`), 'path', 'snapshot_id');
  });

  test('chapters: the active ones with coordinates created in the period, as the chapters list gives them', async () => {
    assert.deepEqual((await get(`${LIST}2024-01/chapters/`)).json().items, inOrder(chapters, '-created_at'));
    assert.deepEqual(
      (await get(`${LIST}2024-01/chapters/?ordering=updated_at`)).json().items,
      inOrder(chapters, 'updated_at'),
    );
    assert.deepEqual((await get(`${LIST}2023-11/chapters/`)).json(), {
      items: [],
      count: 0,
      total_count: 0,
      current_page: 1,
      total_pages: 1,
      has_next: false,
      has_previous: false,
    });
    assertInvalid(await get(`${LIST}2024-01/chapters/?ordering=published_at`), 'query', 'ordering');
  });

  test('projects: active ones, with the client type', async () => {
    const items = (await get(`${LIST}2024-01/projects/?ordering=created_at`)).json().items;
    const types = { 'code-tool': 'code', untyped: 'other', docs: 'documentation' };
    assert.deepEqual(
      items,
      projects.map((p) => ({ ...strip(p), type: types[p.key as keyof typeof types] })),
    );
    assert.deepEqual(await keysOf(get, `${LIST}2024-01/projects/`), ['docs', 'untyped', 'code-tool']);
  });

  test('members: dated members created in the period, the last microsecond included; with url', async () => {
    assert.deepEqual((await get(`${LIST}2024-01/members/`)).json().items, [strip(members[1]!)]);
    assert.deepEqual((await get(`${LIST}2023-11/members/?ordering=-updated_at`)).json().items, [strip(members[0]!)]);
    assert.deepEqual((await get(`${LIST}2024-02/members/`)).json().count, 0);
  });

  test('issues: with organization login (null without an organization) and repository name; every ordering', async () => {
    for (const ordering of ['-created_at', ...bothWays(['created_at', 'updated_at'])]) {
      const query = ordering === '-created_at' ? '' : `?ordering=${ordering}`;
      assert.deepEqual((await get(`${LIST}2024-02/issues/${query}`)).json().items, inOrder(issues, ordering), ordering);
    }
  });

  test('releases: neither drafts nor pre-releases; default -published_at (unpublished first); every ordering', async () => {
    const february = releases.filter((r) => String(r.created_at).startsWith('2024-02'));
    assert.deepEqual((await get(`${LIST}2024-02/releases/`)).json().items, inOrder(february, '-published_at'));
    assert.equal((await get(`${LIST}2024-02/releases/`)).json().items[0].published_at, null);
    for (const ordering of bothWays(['created_at', 'published_at'])) {
      assert.deepEqual(
        (await get(`${LIST}2024-02/releases/?ordering=${ordering}`)).json().items,
        inOrder(february, ordering),
        ordering,
      );
    }
    assert.deepEqual((await get(`${LIST}2024-01/releases/`)).json().items, [strip(releases[0]!)]);
    assertInvalid(await get(`${LIST}2024-02/releases/?ordering=updated_at`), 'query', 'ordering');
  });

  test('pagination of a sub-list and of the list: pages, envelope, Link header, bounds', async () => {
    await assertPagination(
      get,
      `${LIST}2024-02/issues/`,
      inOrder(issues, '-created_at').map((i) => i.title),
      { key: 'title', limit: 2 },
    );
    await assertPagination(get, LIST, ['2024-02', '2024-01', '2023-11'], { key: 'key', limit: 1 });
  });

  test('HEAD on the list, the detail and a sub-list', async () => {
    await assertHead(api, LIST, `${LIST}2024-01`, `${LIST}2024-01/chapters/`);
  });
});

describe('rebuilding', () => {
  const own = useTestApp();
  const refresh = async (now: string) => {
    const report = await refreshSnapshots(own.t.database.db, () => new Date(now));
    own.t.app.shared.watcher.set(report.dataVersion);
    return report;
  };
  const detail = async (key: string) => (await own.get(`${LIST}${key}`)).json();

  test('idempotent; a month completing adds its snapshot; a new record updates one; an emptied month goes', async () => {
    const db = own.t.database.db;
    const { nest } = await nestRepositories(db);
    // The repositories' writes moved the data version (each write of a record records its change); nothing else does.
    const written = await readDataVersion(db);
    assert.deepEqual(await refresh('2021-01-10T00:00:00Z'), {
      snapshots: 0,
      added: 0,
      updated: 0,
      removed: 0,
      changed: false,
      dataVersion: written,
    });
    await issue(db, { repository_id: nest, created_at: at('2020-11-03T00:00:00Z') });
    const december = await issue(db, { repository_id: nest, created_at: at('2020-12-31T23:59:59Z') });
    const first = await refresh('2020-12-31T23:59:59Z');
    assert.deepEqual(
      { ...first, dataVersion: undefined },
      { snapshots: 1, added: 1, updated: 0, removed: 0, changed: true, dataVersion: undefined },
    );
    assert.deepEqual(await keysOf(own.get, LIST), ['2020-11']);

    // The clock moves into January: December is complete. Built again with nothing new: no change at all.
    assert.equal((await refresh('2021-01-01T00:00:00Z')).added, 1);
    const again = await refresh('2021-01-20T00:00:00Z');
    assert.deepEqual([again.added, again.updated, again.removed, again.changed], [0, 0, 0, false]);
    const built = await detail('2020-12');
    assert.deepEqual(
      [built.created_at, built.updated_at, built.new_issues_count],
      ['2021-01-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z', 1],
    );

    // A member first created in November: its counts and updated_at change, its created_at stays.
    await member(db, { created_at: at('2020-11-30T00:00:00Z') });
    assert.equal((await refresh('2021-02-01T00:00:00Z')).updated, 1);
    const november = await detail('2020-11');
    assert.deepEqual(
      [november.new_users_count, november.created_at, november.updated_at],
      [1, '2020-12-31T23:59:59.000Z', '2021-02-01T00:00:00.000Z'],
    );

    // December's only record goes: so does December.
    await db.deleteFrom('issues').where('id', '=', december).execute();
    assert.equal((await refresh('2021-02-02T00:00:00Z')).removed, 1);
    await assertNotFound(own.get, LIST, ['2020-12', '2020-12/issues/'], 'Snapshot not found');
    assert.deepEqual(await keysOf(own.get, LIST), ['2020-11']);
  });
});

describe('import and the command line rebuild them', () => {
  const own = useTestApp();
  let tmp: string;
  let cliDatabase: TestDatabase | undefined;
  before(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-snapshots-'));
    if (process.env.DATABASE_URL) cliDatabase = await createTestDb({ migrate: false });
  });
  after(async () => {
    await cliDatabase?.drop();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  test('an import that adds a project created in an empty month adds that snapshot', async () => {
    const { db } = own.t.database;
    const now = () => new Date('2026-11-24T00:00:00Z');
    const first = await importDataset(db, sourcesFrom(BUNDLED_DATA_DIR), { now });
    assert.ok(
      first.snapshots.added > 10 && first.snapshots.added === first.snapshots.snapshots,
      JSON.stringify(first.snapshots),
    );
    own.t.app.shared.watcher.set(first.dataVersion);
    assert.equal((await own.get(`${LIST}?limit=1`)).json().count, first.snapshots.snapshots);
    await assertNotFound(own.get, LIST, ['2010-06'], 'Snapshot not found');

    const copy = path.join(tmp, 'data');
    await fs.cp(BUNDLED_DATA_DIR, copy, { recursive: true });
    const file = path.join(copy, 'owasp', 'projects.json');
    const projects = JSON.parse(await fs.readFile(file, 'utf8'));
    const built = projects.find((p: { build: string }) => p.build === 'built');
    projects.push({
      ...built,
      name: 'snapshot-probe',
      title: 'OWASP Snapshot Probe',
      url: 'https://owasp.org/www-project-snapshot-probe/',
      created: '2010-06-15',
      type: 'tool',
    });
    await fs.writeFile(file, JSON.stringify(projects));
    const second = await importDataset(db, sourcesFrom(copy), { now });
    assert.deepEqual(
      [second.changed, second.snapshots.added, second.snapshots.updated, second.snapshots.removed],
      [true, 1, 0, 0],
    );
    own.t.app.shared.watcher.set(second.dataVersion);
    assert.equal((await own.get(`${LIST}2010-06`)).json().new_projects_count, 1);
    const items = (await own.get(`${LIST}2010-06/projects/`)).json().items;
    assert.deepEqual(
      items.map((p: { key: string; type: string }) => [p.key, p.type]),
      [['snapshot-probe', 'tool']],
    );

    const unchanged = await importDataset(db, sourcesFrom(copy), { now });
    assert.deepEqual([unchanged.changed, unchanged.dataVersion], [false, second.dataVersion]);
  });

  test('cds snapshots rebuild: builds, then has nothing to do; usage errors exit 2, an unreachable database 1', async () => {
    const env = { DATA_DIR: path.join(tmp, 'cli'), DATABASE_URL: cliDatabase?.url };
    await seedDataDir(env.DATA_DIR);
    assert.equal((await runCli(['migrate'], env)).code, 0);
    const database = await openConfiguredDatabase(loadConfig({ ...env, DATABASE_URL: env.DATABASE_URL ?? '' }));
    try {
      await chapter(database.db, { created_at: at('2020-05-10T00:00:00Z') });
      await member(database.db, { created_at: at('2020-07-01T00:00:00Z') });
    } finally {
      await database.close();
    }
    const built = await runCli(['snapshots', 'rebuild'], env);
    assert.equal(built.code, 0, built.stderr);
    const report = JSON.parse(built.stdout);
    assert.deepEqual([report.snapshots, report.added, report.changed], [2, 2, true]);
    assert.match(built.stderr, /2 snapshots; 2 added, 0 updated, 0 removed/);
    const again = await runCli(['snapshots', 'rebuild'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).changed, false);
    assert.match(again.stderr, /nothing changed/);
    assert.match((await runCli(['status'], env)).stdout, /^snapshots\s+2\s+2$/m);
    for (const args of [['snapshots'], ['snapshots', 'frob'], ['snapshots', 'rebuild', '--now', 'x']]) {
      const result = await runCli(args, env);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr + result.stdout, /Usage: cds|snapshots needs/);
    }
    const unreachable = await runCli(['snapshots', 'rebuild'], {
      ...env,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
    });
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /ECONNREFUSED/);
  });
});

describe('the syncs rebuild them', () => {
  const fixture = useFixtureSync();
  let app: TestApp;
  before(async () => {
    app = await buildTestApp({ sharedDatabase: fixture.database });
  });
  after(() => app.close());
  const now = () => new Date('2026-09-15T00:00:00Z');
  const get = (url: string) => app.app.inject({ method: 'GET', url });

  /** The totals of every snapshot's counts, read through the API. */
  async function totals(): Promise<Record<string, number>> {
    const sums: Record<string, number> = {};
    for (let page = 1, more = true; more; page++) {
      const body = (await get(`${LIST}?limit=100&page=${page}`)).json();
      for (const { key } of body.items as { key: string }[]) {
        for (const [name, value] of Object.entries((await get(`${LIST}${key}`)).json())) {
          if (name.startsWith('new_')) sums[name] = (sums[name] ?? 0) + Number(value);
        }
      }
      more = body.has_next;
    }
    return sums;
  }

  /** The records created before the clock's month, counted as the snapshots count them. */
  async function expected(): Promise<Record<string, number>> {
    const before = sql`created_at < '2026-09-01T00:00:00Z'`;
    const { rows } = await sql<Record<string, number>>`SELECT
      (SELECT count(*) FROM chapters WHERE ${before} AND is_active AND latitude IS NOT NULL AND longitude IS NOT NULL)::int AS new_chapters_count,
      (SELECT count(*) FROM issues WHERE ${before})::int AS new_issues_count,
      (SELECT count(*) FROM projects WHERE ${before} AND is_active)::int AS new_projects_count,
      (SELECT count(*) FROM releases WHERE ${before} AND NOT is_draft AND NOT is_prerelease)::int AS new_releases_count,
      (SELECT count(*) FROM members WHERE ${before} AND updated_at IS NOT NULL)::int AS new_users_count`.execute(
      app.database.db,
    );
    return rows[0]!;
  }

  test('a GitHub sync, then a website sync, each leave the snapshots matching the records; a run without changes changes nothing', async () => {
    const github = () =>
      syncGithub(app.database.db, {
        apiUrl: fixture.standIn.url,
        clock: fixture.clock,
        token: 'test-token',
        organizations: FIXTURE_ORGANIZATIONS,
        now,
      });
    const first = await github();
    app.app.shared.watcher.set(first.dataVersion);
    const afterGithub = await totals();
    assert.deepEqual(afterGithub, await expected());
    // (The listings bring members as stubs without dates: they belong to no period until their profile is known.)
    assert.ok(afterGithub.new_issues_count! > 0 && afterGithub.new_releases_count! > 0, JSON.stringify(afterGithub));
    assert.equal(afterGithub.new_chapters_count, 0);

    const owasp = await syncOwasp(app.database.db, { from: sourcesFrom(BUNDLED_DATA_DIR).owaspDir, now });
    app.app.shared.watcher.set(owasp.dataVersion);
    const afterOwasp = await totals();
    assert.deepEqual(afterOwasp, await expected());
    assert.ok(afterOwasp.new_chapters_count! > 0 && afterOwasp.new_projects_count! > 0, JSON.stringify(afterOwasp));

    const again = await github();
    assert.deepEqual([again.changed, again.dataVersion], [false, owasp.dataVersion]);
  });
});
