// The GitHub import against the bundled recordings (data/github/), on a real database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createTestDb, type TestDatabase } from '../../../../test/helpers.ts';
import type { Db } from '../../../db/index.ts';
import { ImportError } from '../../base/import-error.ts';
import { BUNDLED_DATA_DIR } from '../dataset.import.ts';
import { readGithubData } from './github.read.ts';
import { writeGithubData } from '../../github/github.write.ts';
import type { GithubData } from '../../github/github.records.ts';
import { githubRows, type Json } from './github.test-helpers.ts';

const DIR = path.join(BUNDLED_DATA_DIR, 'github');

let database: TestDatabase;
let db: Db;
let bundled: GithubData;
const temps: string[] = [];
before(async () => {
  database = await createTestDb();
  db = database.db;
  bundled = await readGithubData(DIR);
});
after(async () => {
  await database.drop();
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

const write = (data: GithubData) => db.transaction().execute((trx) => writeGithubData(trx, data));
const rawFile = async (file: string, dir = DIR) => JSON.parse(await fs.readFile(path.join(dir, file), 'utf8'));
const rows = async (query: string) => (await sql.raw<Json>(query).execute(db)).rows;
const one = async (query: string) => (await rows(query))[0] ?? assert.fail(`no row for ${query}`);
const pick = (row: Json, keys: string[]) => keys.map((key) => row[key]);
const snapshot = () => githubRows(db);

/** Every object of every recorded file, except those inside pull requests, which are not imported. */
async function rawObjects(): Promise<Json[]> {
  const found: Json[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null || 'pull_request' in value) return;
    found.push(value as Json);
    Object.values(value).forEach(walk);
  };
  for (const { file } of await rawFile('manifest.json')) walk(await rawFile(file));
  return found;
}
const distinct = (objects: Json[]) => new Set(objects.map((o) => o.id)).size;

async function tempCopy(change: (dir: string) => Promise<unknown>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'github-data-'));
  temps.push(dir);
  await fs.cp(DIR, dir, { recursive: true });
  await change(dir);
  return dir;
}
/** Rewrites a copied file: `change` edits the body in place or returns a replacement object. */
async function edit(dir: string, file: string, change: (body: Json & Json[]) => unknown): Promise<void> {
  const body = await rawFile(file, dir);
  const replacement = change(body);
  await fs.writeFile(path.join(dir, file), JSON.stringify(typeof replacement === 'object' ? replacement : body));
}

test('the first import stores every record, counted independently from the raw files', async () => {
  const objects = await rawObjects();
  const isAccount = (o: Json) => typeof o.login === 'string' && typeof o.id === 'number';
  const isOrganization = (o: Json) => isAccount(o) && (o.type === 'Organization' || String(o.url).includes('/orgs/'));
  const expected = {
    organizations: distinct(objects.filter(isOrganization)),
    members: distinct(objects.filter((o) => isAccount(o) && !isOrganization(o))),
    repositories: distinct(objects.filter((o) => typeof o.full_name === 'string' && o.owner)),
    issues: distinct(objects.filter((o) => typeof o.repository_url === 'string')),
    labels: distinct(objects.filter((o) => /\/labels\/[^/]+$/.test(String(o.url)) && o.id !== undefined)),
    milestones: distinct(objects.filter((o) => /\/milestones\/\d+$/.test(String(o.url)))),
    releases: distinct(objects.filter((o) => /\/releases\/\d+$/.test(String(o.url)))),
  };
  assert.deepEqual(expected, {
    organizations: 4,
    members: 66,
    repositories: 40,
    issues: 40,
    labels: 23,
    milestones: 1,
    releases: 2,
  });
  const railsAdmin: Json[] = await rawFile('sferik-rails_admin/issues.json');
  assert.equal(railsAdmin.filter((issue) => !('pull_request' in issue)).length, 24);
  assert.equal((await rawFile('codeforamerica/repos.json')).length, 30);

  const report = await write(bundled);
  for (const [resource, total] of Object.entries(expected)) {
    const counts = { total, inserted: total, updated: 0, deactivated: 0, skipped: 0 };
    assert.deepEqual(report[resource as keyof typeof expected], counts, resource);
    assert.equal(Number((await one(`SELECT count(*) AS n FROM ${resource}`)).n), total, resource);
  }
  const railsAdminIssues = await one(`SELECT count(*) AS n FROM issues i
    JOIN repositories r ON r.id = i.repository_id WHERE r.name = 'rails_admin'`);
  assert.equal(Number(railsAdminIssues.n), 24);
  const codeForAmerica = await one(`SELECT count(*) AS n FROM repositories WHERE owner_login = 'codeforamerica'`);
  assert.equal(Number(codeForAmerica.n), 30);
  const members = await rows(`SELECT m.login FROM organization_members om
    JOIN organizations o ON o.id = om.organization_id JOIN members m ON m.id = om.member_id
    WHERE o.login = 'codeforamerica' ORDER BY m.login`);
  const listed: Json[] = await rawFile('codeforamerica/members.json');
  assert.deepEqual(
    members.map((m) => m.login),
    listed.map((m) => m.login).sort(),
  );
  assert.deepEqual(
    await rows(`SELECT m.login FROM organization_members om JOIN members m ON m.id = om.member_id
    JOIN organizations o ON o.id = om.organization_id WHERE o.login = 'Octocoders'`),
    [{ login: 'hacktocat' }],
  );
});

test('no pull request is imported', async () => {
  const numbers = (
    await rows(`SELECT number FROM issues i
    JOIN repositories r ON r.id = i.repository_id WHERE r.name = 'rails_admin'`)
  ).map((row) => row.number);
  const prs: Json[] = (await rawFile('sferik-rails_admin/issues.json')).filter((i: Json) => 'pull_request' in i);
  assert.equal(prs.length, 6);
  for (const pr of prs) assert.ok(!numbers.includes(pr.number), `pull request #${pr.number}`);
  assert.deepEqual(await rows(`SELECT id FROM issues WHERE github_id = 444500167 OR url LIKE '%/pull/%'`), []);
});

test('named records carry the mapped fields', async () => {
  const organization = await one(`SELECT * FROM organizations WHERE login = 'octokit-fixture-org'`);
  const repository = await one(`SELECT * FROM repositories WHERE owner_login = 'octokit-fixture-org'
    AND name = 'hello-world'`);
  // (The search columns are the database's, derived from these: test/search.test.ts.)
  const {
    id: _id,
    nest_created_at: _created,
    nest_updated_at: _updated,
    search_name: _name,
    search_vector: _vector,
    ...fields
  } = repository;
  assert.deepEqual(fields, {
    github_id: '103703892',
    owner_login: 'octokit-fixture-org',
    organization_id: organization.id,
    name: 'hello-world',
    description: '',
    homepage: '',
    language: '',
    default_branch: 'master',
    url: 'https://github.com/octokit-fixture-org/hello-world',
    license: '',
    topics: ['fixtures', 'hello', 'hello-world'],
    is_archived: false,
    is_fork: false,
    commits_count: 0,
    contributors_count: 0,
    forks_count: 0,
    stars_count: 0,
    watchers_count: 1,
    open_issues_count: 0,
    size: 0,
    pushed_at: new Date('2017-11-03T20:11:46Z'),
    created_at: new Date('2017-09-15T21:43:08Z'),
    updated_at: new Date('2017-09-19T15:57:54Z'),
  });
  assert.equal(organization.public_repositories_count, 316);

  const cfa = await one(`SELECT * FROM organizations WHERE login = 'codeforamerica'`);
  assert.deepEqual(pick(cfa, ['github_id', 'name', 'email', 'url', 'followers_count', 'public_repositories_count']), [
    '337792',
    'Code for America',
    'labs@codeforamerica.org',
    'https://github.com/codeforamerica',
    1,
    353,
  ]);
  assert.deepEqual(pick(cfa, ['created_at', 'updated_at']), [
    new Date('2010-07-19T19:41:04Z'),
    new Date('2014-03-07T22:42:52Z'),
  ]);
  const stub = await one(`SELECT * FROM organizations WHERE login = 'octokit'`);
  assert.deepEqual(pick(stub, ['url', 'created_at']), ['https://github.com/octokit', null]);

  const release = await one(`SELECT r.*, m.login FROM releases r
    JOIN members m ON m.id = r.author_id WHERE tag_name = 'v1.0.0'`);
  assert.deepEqual(pick(release, ['name', 'description', 'login', 'published_at', 'is_draft']), [
    'Version 1.0.0',
    'Initial release',
    'octokit-fixture-user-a',
    new Date('2022-07-19T04:40:21Z'),
    false,
  ]);

  // The newest of three recorded versions of milestone v1.0 (issues.milestoned, 15:20:35).
  const milestone = await one(`SELECT ms.*, m.login, r.name AS repository FROM milestones ms
    JOIN members m ON m.id = ms.author_id JOIN repositories r ON r.id = ms.repository_id`);
  assert.deepEqual(pick(milestone, ['repository', 'number', 'title', 'state']), ['Hello-World', 1, 'v1.0', 'closed']);
  assert.deepEqual(pick(milestone, ['open_issues_count', 'closed_issues_count']), [1, 0]);
  assert.deepEqual(pick(milestone, ['due_on', 'body', 'login']), [
    new Date('2019-05-23T07:00:00Z'),
    'Add new space flight simulator',
    'Codertocat',
  ]);

  const label = await one(`SELECT l.* FROM labels l JOIN repositories r ON r.id = l.repository_id
    WHERE r.name = 'octokit.rb' AND l.name = 'bug'`);
  assert.deepEqual(pick(label, ['github_id', 'color', 'is_default', 'description']), ['111853', 'e10c02', true, '']);
});

test("an issue's labels come from the labels response recorded after it; no assignees are recorded", async () => {
  const labels = await rows(`SELECT l.name FROM issue_labels il
    JOIN issues i ON i.id = il.issue_id JOIN labels l ON l.id = il.label_id
    JOIN repositories r ON r.id = i.repository_id
    WHERE r.name LIKE 'tmp-scenario-add-labels-to-issue-%' AND i.number = 1 ORDER BY 1`);
  assert.deepEqual(
    labels.map((l) => l.name),
    ['Foo', 'bAr', 'baZ'],
  );
  assert.equal((await rows('SELECT * FROM issue_labels')).length, 3);
  assert.equal((await rows('SELECT * FROM issue_assignees')).length, 0);
  const issue = await one(`SELECT i.*, m.login FROM issues i JOIN members m ON m.id = i.author_id
    WHERE i.github_id = 1308970076`);
  assert.deepEqual(pick(issue, ['login', 'number', 'state', 'comments_count', 'is_locked', 'milestone_id']), [
    'octokit-fixture-user-b',
    2,
    'open',
    0,
    false,
    null,
  ]);
});

test('members carry no e-mail address', async () => {
  const members = JSON.stringify(await rows('SELECT * FROM members')).replace(/https?:\/\/[^"]+/g, '');
  assert.doesNotMatch(members, /@[\w-]+\.\w+/);
  const sferik = await one(`SELECT * FROM members WHERE login = 'sferik'`);
  assert.deepEqual(pick(sferik, ['name', 'location', 'followers_count', 'title']), [
    'Erik Michaels-Ober',
    'San Francisco, CA',
    688,
    '',
  ]);
});

test('a second import of the same data writes nothing', async () => {
  const before = await snapshot();
  const report = await write(await readGithubData(DIR));
  for (const [resource, counts] of Object.entries(report)) {
    assert.deepEqual([counts.inserted, counts.updated, counts.deactivated], [0, 0, 0], resource);
  }
  assert.deepEqual(await snapshot(), before);
});

test('a changed record, label or assignee is updated alone, and counted', async () => {
  const [, userB] = await rawFile('octokit-fixture-org/collaborators.json');
  const dir = await tempCopy(async (d) => {
    await edit(d, 'octokit-fixture-org/issue.created.json', (issue) => ({ ...issue, assignees: [userB] }));
    await edit(d, 'octokit-fixture-org/issue-1.labels.json', (labels) => labels.filter((l) => l.name !== 'baZ'));
    await edit(d, 'manifest.json', (entries) => {
      entries.find((e) => String(e.file).endsWith('issue-1.labels.json'))!.count = 2;
    });
    await edit(d, 'codeforamerica/repos.json', (repos) => {
      repos[0]!.description = 'Changed';
    });
  });
  const before = await snapshot();
  const report = await write(await readGithubData(dir));
  const changes = Object.fromEntries(Object.entries(report).map(([k, c]) => [k, c.inserted + c.updated]));
  assert.deepEqual(changes, {
    organizations: 0,
    members: 0,
    repositories: 1,
    issues: 1,
    labels: 0,
    milestones: 0,
    releases: 0,
  });
  const after = await snapshot();
  const time = (row: Json | undefined) => (row?.nest_updated_at as Date).getTime();
  const touched = (table: 'issues' | 'repositories') =>
    after[table].filter((row, i) => time(row) !== time(before[table][i])).map((row) => row.github_id);
  assert.deepEqual(touched('issues'), ['1308967529']);
  assert.deepEqual(touched('repositories'), ['967930']);
  assert.equal(after.issue_labels.length, 2);
  assert.equal(after.labels.length, 23, 'labels are never deleted');
  assert.equal(after.issue_assignees.length, 1);

  const restored = await write(bundled);
  assert.deepEqual([restored.issues.updated, restored.repositories.updated], [1, 1]);
  const final = await snapshot();
  assert.deepEqual([final.issue_labels.length, final.issue_assignees.length], [3, 0]);
});

test('records of a repository absent from the data are skipped and counted', async () => {
  const dir = await tempCopy((d) =>
    edit(d, 'manifest.json', (entries) => entries.filter((e) => e.file !== 'octokit-octokit.rb/repository.json')),
  );
  const data = await readGithubData(dir);
  assert.equal(data.skipped.labels, 9);
  assert.equal(data.labels.length, 14);
  assert.equal(data.organizations.length, 3, 'the octokit organization was only known as that repository owner');
});

const malformed: [string, (dir: string) => Promise<unknown>, string, string | undefined, RegExp][] = [
  [
    'broken JSON',
    (d) => fs.writeFile(path.join(d, 'octokit-fixture-org/labels.json'), '[{"id": 1,'),
    'octokit-fixture-org/labels.json',
    undefined,
    /not valid JSON/,
  ],
  [
    'an issue without number',
    (d) => edit(d, 'octokit-fixture-org/issues.json', (issues) => delete issues[2]!.number),
    'octokit-fixture-org/issues.json',
    'issue 1308968990',
    /missing "number"/,
  ],
  [
    'a bad timestamp',
    (d) =>
      edit(d, 'sferik-rails_admin/issues.json', (issues) => {
        issues[0]!.updated_at = '2016-10-20 14:46';
      }),
    'sferik-rails_admin/issues.json',
    'issue 184244666',
    /"updated_at" is not a timestamp/,
  ],
  [
    'a member without login',
    (d) => edit(d, 'codeforamerica/members.json', (users) => delete users[3]!.login),
    'codeforamerica/members.json',
    'member 20109',
    /missing "login"/,
  ],
  [
    'a release without tag_name',
    (d) => edit(d, 'octokit-fixture-org/release.v1.0.0.json', (r) => delete r.tag_name),
    'octokit-fixture-org/release.v1.0.0.json',
    'release 72286832',
    /missing "tag_name"/,
  ],
  [
    'a list where an object was recorded',
    (d) => edit(d, 'codeforamerica/organization.json', (o) => [o]),
    'codeforamerica/organization.json',
    undefined,
    /expected an object/,
  ],
  [
    'a file listed in the manifest but missing',
    (d) => fs.rm(path.join(d, 'codeforamerica/members.json')),
    'codeforamerica/members.json',
    undefined,
    /missing/,
  ],
];
for (const [name, change, file, record, detail] of malformed) {
  test(`a malformed folder is refused before any write: ${name}`, async () => {
    const dir = await tempCopy(change);
    await assert.rejects(readGithubData(dir), (error: unknown) => {
      assert.ok(error instanceof ImportError, String(error));
      assert.deepEqual([error.file, error.record], [file, record]);
      assert.match(error.detail, detail);
      return true;
    });
  });
}
