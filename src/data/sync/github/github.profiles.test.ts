// The profile step of the GitHub sync, from the bundled data as a fresh install has it: members and
// organizations known only from listings have no profile and are not published; the sync asks the
// GitHub stand-in for their profiles, within its budget and conditionally, and they appear over HTTP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import { fakeClock } from '../../../../test/fake-clock.ts';
import {
  loadFixtureOrganizations,
  startGithubApiStandIn,
  type GithubApiStandIn,
  type LoggedRequest,
} from '../../../../test/github-api-standin.ts';
import { readDataVersion } from '../../../announcements/counters.queries.ts';
import { changedRows } from '../../base/resource-counts.ts';
import { syncGithub, type GithubSyncReport } from './github.sync.ts';

let t: TestApp;
let standIn: GithubApiStandIn;
const warnings: string[] = [];
// The sync's pacing (600 requests a minute) and the stand-in's rate-limit headers run on this clock: nobody waits.
const clock = fakeClock();

before(async () => {
  t = await buildTestApp({ importBundled: true });
  standIn = await startGithubApiStandIn(await loadFixtureOrganizations(), { now: clock.now });
});
after(async () => {
  await standIn.close();
  await t.close();
});

const PROFILE = /^\/(users|orgs)\/[^/?]+$/;

/** A sync of no organization: only the profile step has anything to do. Then the app sees the new data version. */
async function sync(profileRequests?: number): Promise<{ report: GithubSyncReport; requests: LoggedRequest[] }> {
  const from = standIn.requests.length;
  const report = await syncGithub(t.database.db, {
    apiUrl: standIn.url,
    clock,
    token: 'test-token',
    organizations: [],
    retryBaseMs: 10,
    ...(profileRequests === undefined ? {} : { profileRequests }),
    log: { info: () => {}, warn: (message) => warnings.push(message) },
  });
  t.app.shared.watcher.set(await readDataVersion(t.database.db));
  return { report, requests: standIn.requests.slice(from) };
}

const get = async (url: string) => t.app.inject({ method: 'GET', url });
const listed = async (path: string) =>
  ((await get(`/api/v0/${path}/?limit=100`)).json().items as { login: string }[]).map((i) => i.login);

async function stored(table: 'members' | 'organizations'): Promise<{ login: string; known: boolean }[]> {
  const { rows } = await sql<{ login: string; known: boolean }>`
    SELECT login, created_at IS NOT NULL AND updated_at IS NOT NULL AS known FROM ${sql.table(table)} ORDER BY id`.execute(
    t.database.db,
  );
  return rows;
}

test('before the sync, accounts known only from listings are not published; those with a recorded profile are', async () => {
  const members = await stored('members');
  const known = members.filter((m) => m.known).map((m) => m.login);
  assert.deepEqual(known, ['sferik'], 'the one recorded user profile');
  assert.deepEqual(await listed('members'), known);
  const stub = members.find((m) => !m.known)!;
  assert.equal((await get(`/api/v0/members/${stub.login}`)).statusCode, 404);
  assert.deepEqual((await listed('organizations')).sort(), ['codeforamerica', 'octokit-fixture-org']);
  assert.equal((await get('/api/v0/organizations/Octocoders')).statusCode, 404);
});

test('a run asks at most its budget of profiles, never-asked accounts without a profile first, and publishes them', async () => {
  const { report, requests } = await sync(10);
  const asked = requests.filter((r) => PROFILE.test(r.path));
  assert.equal(asked.length, 10, 'the budget');
  assert.equal(requests.length, 10, 'nothing else: no organization to sync');
  assert.equal(report.profiles.asked, 10);
  assert.ok(asked.every((r) => r.status === 200 || r.status === 404));
  assert.ok(!asked.some((r) => r.path === '/users/sferik'), 'accounts without a profile come before known ones');
  assert.equal(report.profiles.fetched, asked.filter((r) => r.status === 200).length);
  assert.ok(report.profiles.fetched > 0);
  assert.equal(report.changed, true);

  // Each account fetched is served with the profile the stand-in gave, GitHub's dates included.
  for (const request of asked.filter((r) => r.status === 200)) {
    const [, kind, login] = request.path.split('/') as [string, string, string];
    const profile = standIn.profiles.get(login.toLowerCase())!;
    const res = await get(`/api/v0/${kind === 'users' ? 'members' : 'organizations'}/${login}`);
    assert.equal(res.statusCode, 200, request.path);
    const body = res.json();
    assert.equal(body.name, profile.name ?? '');
    assert.equal(body.created_at, new Date(String(profile.created_at)).toISOString());
    assert.equal(body.updated_at, new Date(String(profile.updated_at)).toISOString());
    if (kind === 'users') assert.equal(body.followers_count, profile.followers);
  }
});

test('later runs finish the job, ask again only with the ETag (304), and leave accounts GitHub does not know unpublished', async () => {
  const second = await sync(500);
  const members = await stored('members');
  const organizations = await stored('organizations');
  const everyone = members.length + organizations.length;
  assert.equal(second.report.profiles.asked, everyone, 'every account, the ones asked before included (in turn)');
  assert.ok(second.requests.filter((r) => r.status === 304).length >= 1, 'profiles fetched before answer 304');

  // sferik's profile is recorded (imported), though the stand-in does not serve it: it stays as imported.
  for (const { login, known } of members) {
    const served = standIn.profiles.has(login.toLowerCase());
    assert.equal(known, served || login === 'sferik', login);
    assert.equal((await get(`/api/v0/members/${login}`)).statusCode, known ? 200 : 404, login);
  }
  const unserved = members.filter((m) => !standIn.profiles.has(m.login.toLowerCase()));
  assert.ok(unserved.length > 1, 'the recordings mention accounts the stand-in has no profile for');
  assert.deepEqual(
    (await listed('members')).sort(),
    members
      .filter((m) => m.known)
      .map((m) => m.login)
      .sort(),
  );
  assert.deepEqual(
    (await listed('organizations')).sort(),
    organizations.map((o) => o.login).sort(),
    'every organization now',
  );

  const version = await readDataVersion(t.database.db);
  const third = await sync(500);
  assert.equal(changedRows(third.report.counts), 0);
  assert.equal(third.report.changed, false);
  assert.equal(await readDataVersion(t.database.db), version);
  assert.ok(
    third.requests.every((r) => r.status === 304 || r.status === 404),
    'nothing changed: 304, or 404 for the unknown',
  );
  assert.equal(third.requests.filter((r) => r.status === 404).length, unserved.length);
  assert.equal(third.report.profiles.notModified, everyone - unserved.length);
});

test('a profile changed upstream is fetched and served; a login that now names another account is left as stored', async () => {
  const logins = new Set((await stored('members')).map((m) => m.login.toLowerCase()));
  const [changed, reused] = [...standIn.profiles.entries()].filter(
    ([login, p]) => p.type !== 'Organization' && logins.has(login),
  );
  Object.assign(changed![1], { name: 'Renamed Upstream', followers: 99, updated_at: '2025-01-02T03:04:05Z' });
  const before = (await get(`/api/v0/members/${reused![0]}`)).json();
  standIn.profiles.set(reused![0], { ...reused![1], id: 987_654_321, name: 'Someone Else' });

  const { report } = await sync(500);
  assert.equal(report.profiles.changed, 1);
  const res = (await get(`/api/v0/members/${changed![0]}`)).json();
  assert.deepEqual(
    [res.name, res.followers_count, res.updated_at],
    ['Renamed Upstream', 99, '2025-01-02T03:04:05.000Z'],
  );
  assert.deepEqual(
    (await get(`/api/v0/members/${reused![0]}`)).json(),
    before,
    'the account we know is not overwritten',
  );
  assert.ok(
    warnings.some((w) =>
      w.includes(`${String(reused![1].login)}: GitHub's profile of that login is another account now`),
    ),
    warnings.join('\n'),
  );
});

test('a profile answered 500 is retried; a budget of 0 asks nothing; a dropped connection stops the run and the next resumes', async () => {
  const logins = new Set((await stored('members')).map((m) => m.login.toLowerCase()));
  const login = [...standIn.profiles.keys()].filter((l) => logins.has(l)).at(-1);
  standIn.profiles.get(login!)!.bio = 'new bio';
  standIn.fail('server-error', (path) => path.toLowerCase() === `/users/${login}`);
  const { report, requests } = await sync(500);
  assert.equal(report.profiles.changed, 1);
  assert.deepEqual(
    requests.filter((r) => r.path.toLowerCase() === `/users/${login}`).map((r) => r.status),
    [500, 200],
  );
  assert.equal((await get(`/api/v0/members/${login}`)).json().bio, 'new bio');

  assert.equal((await sync(0)).requests.length, 0);

  standIn.dropAfter(3);
  await assert.rejects(sync(500), /GitHub sync stopped/);
  standIn.dropAfter(undefined);
  const resumed = await sync(500);
  assert.equal(changedRows(resumed.report.counts), 0);
});
