// The GitHub sync against the local API stand-in serving the recorded responses of data/github/, with
// GitHub's failures injected: secondary and primary rate limits, a 500, a dropped connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FIXTURE_ORGANIZATIONS,
  servedRecords,
  storedRecords,
  useFixtureSync,
  type LoggedRequest,
} from '../../../../test/github-api-standin.ts';
import { readDataVersion } from '../../../announcements/counters.queries.ts';
import { changedRows } from '../../base/resource-counts.ts';
import { syncGithub, type GithubSyncReport } from './github.sync.ts';

const warnings: string[] = [];
const fixture = useFixtureSync();

async function run(): Promise<{ report: GithubSyncReport; requests: LoggedRequest[] }> {
  const from = fixture.standIn.requests.length;
  const report = await syncGithub(fixture.database.db, {
    apiUrl: fixture.standIn.url,
    clock: fixture.clock,
    token: 'test-token',
    organizations: FIXTURE_ORGANIZATIONS,
    perPage: 5,
    retryBaseMs: 20,
    log: { info: () => {}, warn: (message) => warnings.push(message) },
  });
  return { report, requests: fixture.standIn.requests.slice(from) };
}

const retryOf = (requests: LoggedRequest[], failed: LoggedRequest) =>
  requests.find((r) => r !== failed && r.path === failed.path && r.at >= failed.at && r.status !== failed.status);

test('the first run stores exactly what the stand-in serves, through rate limits, a 500 and a dropped connection', async () => {
  fixture.standIn.fail('secondary-rate-limit', (path) => path.endsWith('/orgs/codeforamerica/repos'));
  fixture.standIn.fail('rate-limit', (path) => path.endsWith('/public_members'));
  fixture.standIn.fail('server-error', (path) => path.includes('paginate-issues') && path.endsWith('/issues'));
  fixture.standIn.fail('drop', (path) => path.includes('/repos/octokit/octokit.rb/labels'));
  const { report, requests } = await run();

  assert.deepEqual(await storedRecords(fixture.database.db), servedRecords(fixture.standIn.organizations));
  assert.equal(report.changed, true);
  assert.deepEqual(report.failed, []);
  assert.equal(report.repositories, 39);
  assert.equal(report.requests.total, requests.length, 'the client counts what the server saw');
  assert.ok(requests.every((r) => r.authorization === 'token test-token'));

  const limited = requests.find((r) => r.status === 403 && r.path.includes('/orgs/codeforamerica/repos'))!;
  assert.ok(retryOf(requests, limited)!.at - limited.at >= 1000, 'Retry-After: 1 is honoured');
  const spent = requests.find((r) => r.status === 403 && r.path.includes('/public_members'))!;
  assert.ok(retryOf(requests, spent)!.at - spent.at >= 900, 'waits for x-ratelimit-reset');
  for (const status of [500, 0]) {
    const failed = requests.find((r) => r.status === status)!;
    assert.equal(retryOf(requests, failed)?.status, 200, `status ${status} is retried`);
  }
  assert.ok(
    requests.some((r) => /\/orgs\/codeforamerica\/repos\?.*page=6/.test(r.path)),
    'follows Link to the last page',
  );
});

test('a second run writes nothing, keeps the data version, and mostly gets 304s; a third gets only 304s', async () => {
  const version = await readDataVersion(fixture.database.db);
  const second = await run();
  assert.equal(changedRows(second.report.counts), 0);
  assert.equal(second.report.changed, false);
  assert.equal(await readDataVersion(fixture.database.db), version);
  const notModified = second.requests.filter((r) => r.status === 304).length;
  assert.ok(notModified / second.requests.length > 0.9, `${notModified} of ${second.requests.length} were 304`);
  // The only 200s: issue listings asked for the first time with `since`.
  assert.ok(second.requests.filter((r) => r.status === 200).every((r) => /\/issues\?.*since=/.test(r.path)));

  const third = await run();
  assert.equal(changedRows(third.report.counts), 0);
  assert.ok(
    third.requests.every((r) => r.status === 304),
    'nothing changed: every answer is 304',
  );
  assert.deepEqual(await storedRecords(fixture.database.db), servedRecords(fixture.standIn.organizations));
});

test('an issue changed upstream is fetched with since and stored; the data version moves', async () => {
  const repo = fixture.standIn.organizations[0]!.repositories.find((r) =>
    String(r.repository.name).includes('paginate-issues'),
  )!;
  const issue = repo.issues.find((i) => i.number === 7)!;
  Object.assign(issue, {
    title: 'Renamed upstream',
    state: 'closed',
    updated_at: '2024-01-02T03:04:05Z',
    closed_at: '2024-01-02T03:04:05Z',
  });
  const version = await readDataVersion(fixture.database.db);
  const { report, requests } = await run();
  assert.equal(report.counts.issues.updated, 1);
  assert.equal(changedRows(report.counts), 1);
  assert.ok((await readDataVersion(fixture.database.db)) > version);
  const listed = requests.filter((r) => r.path.includes('paginate-issues') && r.path.includes('/issues?'));
  assert.ok(listed.length === 1 && listed[0]!.path.includes('since=2022-07-19T04%3A39%3A16Z'), listed[0]?.path);
  const stored = await fixture.database.db
    .selectFrom('issues')
    .select(['title', 'state'])
    .where('github_id', '=', String(issue.id))
    .executeTakeFirstOrThrow();
  assert.deepEqual(stored, { title: 'Renamed upstream', state: 'closed' });
});

test('a repository whose data cannot be read is reported and skipped; the others are synced', async () => {
  const repo = fixture.standIn.organizations[0]!.repositories.find((r) => r.labels.length > 5)!;
  const label = repo.labels[0]!;
  const color = label.color;
  label.color = 'not a colour';
  repo.labels.push({
    ...repo.labels[1]!,
    id: 99_000_001,
    name: 'new upstream',
    url: `${String(repo.labels[1]!.url)}-new`,
  });
  try {
    const { report } = await run();
    assert.equal(report.failed.length, 1);
    assert.match(report.failed[0]!.error, /color/);
    assert.equal(report.failed[0]!.repository, repo.repository.full_name);
    assert.equal(
      await fixture.database.db
        .selectFrom('labels')
        .select('id')
        .where('github_id', '=', '99000001')
        .executeTakeFirst(),
      undefined,
    );
  } finally {
    label.color = color;
    repo.labels.pop();
  }
  const { report } = await run();
  assert.deepEqual(report.failed, []);
  assert.deepEqual(await storedRecords(fixture.database.db), servedRecords(fixture.standIn.organizations));
});
