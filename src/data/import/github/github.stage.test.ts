// The dataset import's staging (import/github/*.stage.ts: issues, labels, organizations, members and repositories
// sent to TEMP tables as they are read, versions chosen in SQL) against the in-memory path the live sync
// uses: same report, same rows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createTestDb, type TestDatabase } from '../../../../test/helpers.ts';
import type { Db } from '../../../db/index.ts';
import { BUNDLED_DATA_DIR } from '../dataset.import.ts';
import { readGithubData } from './github.read.ts';
import type { GithubReport } from '../../github/github.records.ts';
import { writeGithubDataset as writeGithubData } from './github-dataset.write.ts';
import { githubRows, type Json } from './github.test-helpers.ts';

const DIR = path.join(BUNDLED_DATA_DIR, 'github');

let staged: TestDatabase;
// Opened when first used, after the first test dropped its own database: it is that one, given back emptied
// (test/spare-db.ts), instead of another load of the template.
let memory: Promise<TestDatabase> | undefined;
const memoryDb = async () => (await (memory ??= createTestDb())).db;
const temps: string[] = [];
before(async () => {
  staged = await createTestDb();
});
after(async () => {
  await Promise.all([memory?.then((database) => database.drop()), staged.drop()]);
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

const importInMemory = async (dir: string) => {
  const data = await readGithubData(dir);
  return (await memoryDb()).transaction().execute((trx) => writeGithubData(trx, data));
};
const importStaged = (dir: string) =>
  staged.db.transaction().execute(async (trx) => writeGithubData(trx, await readGithubData(dir, trx)));

// Every row but the service's own timestamps (row ids included: both paths insert in the same order).
const snapshot = async (db: Db) =>
  Object.fromEntries(
    Object.entries(await githubRows(db)).map(([table, rows]) => [
      table,
      rows.map(({ nest_created_at: _c, nest_updated_at: _u, ...row }) => row),
    ]),
  );
const columnOf = async (db: Db, table: string, column: string, githubId: number) =>
  (await sql.raw<Json>(`SELECT ${column} AS value FROM ${table} WHERE github_id = ${githubId}`).execute(db)).rows[0]
    ?.value;
const issueTitle = async (db: Db, githubId: number) =>
  (await sql<{ title: string }>`SELECT title FROM issues WHERE github_id = ${githubId}`.execute(db)).rows[0]?.title;

/** The bundled recordings plus files in front of and after them (`first`, `last`: file → [request, body]). */
async function dataset(
  first: Record<string, [string, unknown]>,
  last: Record<string, [string, unknown]>,
): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'github-stage-'));
  temps.push(dir);
  await fs.cp(DIR, dir, { recursive: true });
  const manifest: Json[] = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8'));
  const entries = async (files: Record<string, [string, unknown]>) =>
    Promise.all(
      Object.entries(files).map(async ([file, [request, body]]) => {
        await fs.writeFile(path.join(dir, file), JSON.stringify(body));
        return { file, requests: [`GET ${request} -> 200`] };
      }),
    );
  const all = [...(await entries(first)), ...manifest, ...(await entries(last))];
  await fs.writeFile(path.join(dir, 'manifest.json'), JSON.stringify(all));
  return dir;
}

let issue: Json;
before(async () => {
  const issues: Json[] = JSON.parse(await fs.readFile(path.join(DIR, 'sferik-rails_admin/issues.json'), 'utf8'));
  issue = issues.find((candidate) => !('pull_request' in candidate))!;
});

// The tables' keys, indexes and triggers (with whether each is enabled): a first load drops some and builds them again.
const catalog = async (db: Db) =>
  (
    await sql<{ item: string }>`
      SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) AS item
      FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
      UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
      UNION ALL SELECT 'trigger ' || tgrelid::regclass || ' ' || tgname || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
      ORDER BY 1`.execute(db)
  ).rows.map((row) => row.item);
const countRows = async (db: Db, table: string) =>
  Number((await sql.raw<{ count: string }>(`SELECT count(*) AS count FROM ${table}`).execute(db)).rows[0]!.count);

test('a first load (empty tables, indexes and foreign keys built at the end): a failure leaves the catalog as it was; a success leaves it as the migrations made it and takes the tombstones of returning records away', async () => {
  const before = await catalog(staged.db);
  const bad = await dataset({ 'bad.json': ['/repositories/1/issues', [{ ...issue, state: 'reopened' }]] }, {});
  await assert.rejects(importStaged(bad), /"state" is not open or closed/);
  assert.deepEqual(await catalog(staged.db), before);
  assert.equal(await countRows(staged.db, 'issues'), 0);

  // Into a database of its own (the next tests start from empty ones): an issue of the source was deleted once.
  const fresh = await createTestDb();
  try {
    await sql`INSERT INTO tombstones (resource, key) VALUES ('issues', ${issue.html_url as string})`.execute(fresh.db);
    await fresh.db.transaction().execute(async (trx) => writeGithubData(trx, await readGithubData(DIR, trx)));
    assert.deepEqual(await catalog(fresh.db), before);
    assert.ok((await countRows(fresh.db, 'issue_labels')) > 0);
    assert.equal(await countRows(fresh.db, 'tombstones'), 0);
  } finally {
    await fresh.drop();
  }
});

test('several copies of an issue across files: the newest wins, then the most complete; an issue of an unknown repository is skipped', async () => {
  const id = issue.id as number;
  const newer: Json = { ...issue, title: 'the newest copy', updated_at: '2030-01-02T00:00:00Z' };
  const older = { ...issue, title: 'an older copy', updated_at: '2030-01-01T00:00:00Z' };
  // As new as `newer` but with fewer fields: loses to it, though read first.
  const lessComplete: Json = { ...newer, title: 'a less complete copy' };
  delete lessComplete.body;
  delete lessComplete.milestone;
  const stray = {
    ...issue,
    id: 987_654_321,
    number: 1,
    title: 'an issue of a repository not in the source',
    repository_url: 'https://api.github.com/repos/nobody/absent',
    url: 'https://api.github.com/repos/nobody/absent/issues/1',
  };
  const dir = await dataset(
    { 'first.json': ['/repositories/1/issues', [lessComplete, stray]] },
    { 'last.json': ['/repositories/1/issues', [older, newer, stray]] },
  );
  const inMemory: GithubReport = await importInMemory(dir);
  const inStage: GithubReport = await importStaged(dir);
  assert.deepEqual(inStage, inMemory);
  assert.deepEqual(inStage.issues, { total: 40, inserted: 40, updated: 0, deactivated: 0, skipped: 1 });
  assert.equal(await issueTitle(staged.db, id), 'the newest copy');
  assert.equal(await issueTitle(staged.db, 987_654_321), undefined);
  assert.deepEqual(await snapshot(staged.db), await snapshot(await memoryDb()));

  // Again, with the issue's labels given by a response of their own, an id-less label, and the older copy
  // now the newest: same updates counted, same rows.
  const labels = issue.labels as Json[];
  const relabelled = {
    ...older,
    updated_at: '2031-01-01T00:00:00Z',
    labels: [{ name: labels[0]?.name ?? 'bug', color: 'ffffff' }],
  };
  const again = await dataset(
    { 'first.json': ['/repositories/1/issues', [relabelled]] },
    { 'labels.json': ['/repos/sferik/rails_admin/issues/' + String(issue.number) + '/labels', []] },
  );
  const [secondMemory, secondStage] = [await importInMemory(again), await importStaged(again)];
  assert.deepEqual(secondStage, secondMemory);
  assert.equal(secondStage.issues.updated, 1);
  assert.equal(await issueTitle(staged.db, id), 'an older copy');
  assert.deepEqual(await snapshot(staged.db), await snapshot(await memoryDb()));
});

test('a bad issue of a known repository fails the staged import and changes nothing', async () => {
  const before = await snapshot(staged.db);
  const dir = await dataset({ 'bad.json': ['/repositories/1/issues', [{ ...issue, state: 'reopened' }]] }, {});
  await assert.rejects(importStaged(dir), /"state" is not open or closed/);
  await assert.rejects(importInMemory(dir), /"state" is not open or closed/);
  assert.deepEqual(await snapshot(staged.db), before);
});

test('several copies of members, organizations, repositories, labels, milestones and releases: the versions, rows and report of the in-memory path', async () => {
  const read = async (file: string) => JSON.parse(await fs.readFile(path.join(DIR, file), 'utf8')) as Json & Json[];
  const user = await read('sferik-rails_admin/user.sferik.json');
  const organization = await read('codeforamerica/organization.json');
  const repository = await read('sferik-rails_admin/repository.json');
  const labels = await read('octokit-octokit.rb/labels.json');
  // Versions' rule is not transitive when some copies lack updated_at: read after the bundled user, `a`
  // (newer) beats it, `b` (newer still, few fields) beats `a`, and `c` (no date, more fields than `b`)
  // beats `b`. The last copy wins although the newest is `b`.
  const e = { ...user, updated_at: null, name: 'copy e' };
  const a = { ...user, updated_at: '2031-01-01T00:00:00Z', name: 'copy a' };
  const b = { login: user.login, id: user.id, type: 'User', updated_at: '2032-01-01T00:00:00Z', name: 'copy b' };
  const c = { ...e, name: 'copy c' };
  const stub = { login: user.login, id: user.id, type: 'User' };
  const [label, other] = labels as Json[] as [Json, Json];
  const release = await read('octokit-fixture-org/release.v1.0.0.json');
  const milestone = (await read('webhook-payloads/milestone.created.payload.json')).milestone as Json;
  const releases = `/repos/${String(release.url).split('/').slice(4, 6).join('/')}/releases`;
  const milestones = '/repos/Codertocat/Hello-World/milestones';
  const dir = await dataset(
    {
      'repository.newer.json': [
        '/repos/sferik/rails_admin',
        { ...repository, updated_at: '2031-01-01T00:00:00Z', description: 'the newer copy' },
      ],
      'label.fewer.json': [
        '/repos/octokit/octokit.rb/labels',
        [{ id: label.id, url: label.url, name: 'a copy with fewer fields', color: 'ffffff' }],
      ],
      'organization.newer.json': [
        '/orgs/codeforamerica',
        { ...organization, updated_at: '2031-01-01T00:00:00Z', name: 'the newer copy' },
      ],
      'milestone.newer.json': [
        milestones,
        [{ ...milestone, updated_at: '2031-01-01T00:00:00Z', title: 'the newer copy' }],
      ],
      'release.fewer.json': [releases, [{ ...release, name: 'a copy with fewer fields', body: null, assets: null }]],
    },
    {
      'user.e.json': ['/users/sferik', e],
      'user.a.json': ['/users/sferik', a],
      'user.b.json': ['/users/sferik', b],
      'user.c.json': ['/users/sferik', c],
      'collaborators.json': ['/repos/sferik/rails_admin/collaborators', [stub]],
      'repository.older.json': [
        '/repos/sferik/rails_admin',
        { ...repository, updated_at: '2030-01-01T00:00:00Z', description: 'an older copy' },
      ],
      'organization.older.json': [
        '/orgs/codeforamerica',
        { ...organization, updated_at: '2030-01-01T00:00:00Z', name: 'an older copy' },
      ],
      'members.json': ['/orgs/CodeForAmerica/members', [stub]],
      'labels.more.json': ['/repos/octokit/octokit.rb/labels', [{ ...other, description: 'more fields', extra: 'x' }]],
      'milestone.older.json': [
        milestones,
        [{ ...milestone, updated_at: '2030-01-01T00:00:00Z', title: 'an older copy' }],
      ],
      'release.more.json': [releases, [{ ...release, name: 'a copy with more fields', extra: 'x' }]],
      'release.absent.json': [
        '/repos/nobody/absent/releases',
        [{ ...release, id: 987_654_321, url: 'https://api.github.com/repos/nobody/absent/releases/1' }],
      ],
      'labels.absent.json': [
        '/repos/nobody/absent/labels',
        [{ ...label, id: 987_654_321, url: 'https://api.github.com/repos/nobody/absent/labels/bug' }],
      ],
    },
  );
  const inMemory: GithubReport = await importInMemory(dir);
  const inStage: GithubReport = await importStaged(dir);
  assert.deepEqual(inStage, inMemory);
  assert.equal(inStage.labels.skipped, inMemory.labels.skipped);
  assert.ok(inStage.labels.skipped >= 1);
  assert.equal(await columnOf(staged.db, 'members', 'name', user.id as number), 'copy c');
  assert.equal(await columnOf(staged.db, 'repositories', 'description', repository.id as number), 'the newer copy');
  assert.equal(await columnOf(staged.db, 'organizations', 'name', organization.id as number), 'the newer copy');
  assert.equal(await columnOf(staged.db, 'labels', 'description', other.id as number), 'more fields');
  assert.notEqual(await columnOf(staged.db, 'labels', 'name', label.id as number), 'a copy with fewer fields');
  assert.equal(await columnOf(staged.db, 'labels', 'name', 987_654_321), undefined);
  assert.equal(await columnOf(staged.db, 'milestones', 'title', milestone.id as number), 'the newer copy');
  assert.equal(await columnOf(staged.db, 'releases', 'name', release.id as number), 'a copy with more fields');
  assert.equal(inStage.releases.skipped, 1);
  assert.deepEqual(await snapshot(staged.db), await snapshot(await memoryDb()));
});

test('a bad label, member or release fails the staged import and changes nothing', async () => {
  const before = await snapshot(staged.db);
  const labels = JSON.parse(await fs.readFile(path.join(DIR, 'octokit-octokit.rb/labels.json'), 'utf8')) as Json[];
  const badLabel = await dataset(
    {},
    { 'bad.json': ['/repos/octokit/octokit.rb/labels', [{ ...labels[0], color: 'not a colour' }]] },
  );
  await assert.rejects(importStaged(badLabel), /"color" is not six hex digits/);
  await assert.rejects(importInMemory(badLabel), /"color" is not six hex digits/);
  const badMember = await dataset({}, { 'bad.json': ['/users/nobody', { id: 5, type: 'User' }] });
  await assert.rejects(importStaged(badMember), /missing "login"/);
  await assert.rejects(importInMemory(badMember), /missing "login"/);
  const release = JSON.parse(
    await fs.readFile(path.join(DIR, 'octokit-fixture-org/release.v1.0.0.json'), 'utf8'),
  ) as Json;
  const badRelease = await dataset(
    {},
    {
      'bad.json': [
        `/repos/${String(release.url).split('/').slice(4, 6).join('/')}/releases`,
        [{ ...release, tag_name: null }],
      ],
    },
  );
  await assert.rejects(importStaged(badRelease), /missing "tag_name"/);
  await assert.rejects(importInMemory(badRelease), /missing "tag_name"/);
  assert.deepEqual(await snapshot(staged.db), before);
  // A bad label of a repository not in the source is skipped, as in memory.
  const absent = 'https://api.github.com/repos/nobody/absent/labels/bug';
  const strayLabel = await dataset(
    {},
    { 'stray.json': ['/repos/nobody/absent/labels', [{ ...labels[0], url: absent, color: 'not a colour' }]] },
  );
  assert.deepEqual(await importStaged(strayLabel), await importInMemory(strayLabel));
  assert.deepEqual(await snapshot(staged.db), await snapshot(await memoryDb()));
});
