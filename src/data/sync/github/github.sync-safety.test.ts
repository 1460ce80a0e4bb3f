// What the GitHub sync must never do, against the stand-in (issue 15): store a private repository or anything
// of it, keep one that turned private, ignore Retry-After or x-ratelimit-reset, or let any worker send a
// request while a secondary limit's pause lasts. Time is the stand-in's fake clock: nobody waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import {
  FIXTURE_ORGANIZATIONS,
  servedRecords,
  storedRecords,
  useFixtureSync,
  type LoggedRequest,
} from '../../../../test/github-api-standin.ts';
import { readDataVersion } from '../../../announcements/counters.queries.ts';
import { retryAfterMs } from './github.client.ts';
import { SyncStopped, syncGithub, type GithubSyncOptions } from './github.sync.ts';

// The stand-in serves private repositories whatever `type` asks: the client's own check must hold.
const fixture = useFixtureSync({ honourType: false });

async function run(options: Partial<GithubSyncOptions> = {}) {
  const from = fixture.standIn.requests.length;
  const report = await syncGithub(fixture.database.db, {
    apiUrl: fixture.standIn.url,
    clock: fixture.clock,
    token: 't',
    organizations: FIXTURE_ORGANIZATIONS,
    perPage: 5,
    retryBaseMs: 10,
    requestsPerMinute: 0,
    ...options,
  });
  return { report, requests: fixture.standIn.requests.slice(from) };
}

const repositories = () => fixture.standIn.organizations.flatMap((o) => o.repositories);
const named = (part: string) => repositories().find((r) => String(r.repository.full_name).includes(part))!;
const makePrivate = (repository: Record<string, unknown>, hidden: boolean) =>
  Object.assign(repository, { private: hidden, visibility: hidden ? 'private' : 'public' });

async function storedIds(
  table: 'repositories' | 'issues' | 'labels' | 'milestones' | 'releases',
  repositoryGithubId: unknown,
) {
  const { rows } =
    table === 'repositories'
      ? await sql<{
          id: string;
        }>`SELECT github_id AS id FROM repositories WHERE github_id = ${Number(repositoryGithubId)}`.execute(
          fixture.database.db,
        )
      : await sql<{ id: string }>`
        SELECT t.github_id AS id FROM ${sql.table(table)} t JOIN repositories r ON r.id = t.repository_id
        WHERE r.github_id = ${Number(repositoryGithubId)}`.execute(fixture.database.db);
  return rows.map((row) => row.id);
}

test('a private repository is never stored, nor asked for its issues, though the listing serves it', async (t) => {
  const secret = named('octokit-fixture-org/hello-world');
  makePrivate(secret.repository, true);
  t.after(() => makePrivate(secret.repository, false));
  const { report, requests } = await run();

  assert.deepEqual(report.failed, []);
  assert.deepEqual(await storedIds('repositories', secret.repository.id), []);
  assert.deepEqual(await storedRecords(fixture.database.db), servedRecords(fixture.standIn.organizations));
  const listings = requests.filter((r) => /\/orgs\/[^/]+\/repos\?/.test(r.path));
  assert.ok(
    listings.length > 0 && listings.every((r) => r.path.includes('type=public')),
    'asks for public repositories',
  );
  assert.ok(
    !requests.some((r) => r.path.startsWith(`/repos/${String(secret.repository.full_name)}/`)),
    'never reads a private repository',
  );
});

test('commit and contributor counts are taken when a repository was pushed, and kept otherwise', async () => {
  const repo = named('octokit-fixture-org/hello-world');
  repo.commits = Array.from({ length: 7 }, (_, i) => ({ sha: `c${i}` }));
  repo.contributors = Array.from({ length: 3 }, (_, i) => ({ login: `dev${i}`, id: 900 + i }));
  repo.repository.pushed_at = '2030-01-01T00:00:00Z';
  const counts = () =>
    fixture.database.db
      .selectFrom('repositories')
      .select(['commits_count', 'contributors_count'])
      .where('github_id', '=', String(repo.repository.id))
      .executeTakeFirstOrThrow();
  const first = await run();
  assert.deepEqual(await counts(), { commits_count: 7, contributors_count: 3 });
  assert.ok(
    first.requests.some((r) => r.path.includes('/hello-world/commits?per_page=1')),
    'one record a page: the last page is the count',
  );

  // Not pushed since: no request for the counts. The listing changes (stars): the counts stay.
  repo.repository.stargazers_count = Number(repo.repository.stargazers_count ?? 0) + 1;
  const second = await run();
  assert.ok(
    !second.requests.some((r) => /\/(commits|contributors)\?/.test(r.path)),
    'nothing pushed: no count requests',
  );
  assert.deepEqual(await counts(), { commits_count: 7, contributors_count: 3 });
});

test('a repository that turns private disappears with its issues, labels, milestones and releases', async (t) => {
  await run();
  const turning = repositories().find((r) => r.milestones.length > 0)!;
  const id = turning.repository.id;
  assert.ok(
    (await storedIds('milestones', id)).length > 0 && (await storedIds('labels', id)).length > 0,
    'stored while public',
  );
  const version = await readDataVersion(fixture.database.db);

  makePrivate(turning.repository, true);
  t.after(() => makePrivate(turning.repository, false));
  const { report } = await run();
  assert.equal(report.removedRepositories, 1);
  assert.ok((await readDataVersion(fixture.database.db)) > version);
  for (const table of ['repositories', 'issues', 'labels', 'milestones', 'releases'] as const) {
    assert.deepEqual(await storedIds(table, id), [], `${table} of the private repository`);
  }
  const { rows } = await sql`SELECT 1 FROM sync_requests WHERE scope = ${`github:repo:${String(id)}`}`.execute(
    fixture.database.db,
  );
  assert.equal(rows.length, 0, 'nothing remembers it');
  // Accounts stay (public profiles; the writer never deletes them): its owner was stored as an account.
  const { members: _stored, ...stored } = await storedRecords(fixture.database.db);
  const { members: _served, ...served } = servedRecords(fixture.standIn.organizations);
  assert.deepEqual(stored, served);

  // Public again: it comes back whole.
  makePrivate(turning.repository, false);
  await run();
  assert.deepEqual(await storedRecords(fixture.database.db), servedRecords(fixture.standIn.organizations));
});

test("a secondary limit's Retry-After and a spent budget's x-ratelimit-reset are honoured to the second", async () => {
  const target = named('paginate-issues');
  fixture.standIn.fail(
    'secondary-rate-limit',
    (path) => path.endsWith(`/repos/${String(target.repository.full_name)}/labels`),
    { retryAfter: 7, status: 429 },
  );
  fixture.standIn.fail('rate-limit', (path) => path.endsWith('/orgs/codeforamerica/public_members'), { resetIn: 42 });
  const { requests } = await run();

  const limited = requests.find((r) => r.status === 429 && r.path.includes('/labels'))!;
  const retry = requests.find((r) => r.path === limited.path && r.at > limited.at)!;
  assert.equal(retry.at - limited.at, 7000, 'a 429 with Retry-After: 7 → the retry leaves exactly 7 s later');

  const spent = requests.find((r) => r.status === 403 && r.path.includes('/public_members'))!;
  const again = requests.find((r) => r.path === spent.path && r.at > spent.at)!;
  assert.equal(again.at, (Math.ceil(spent.at / 1000) + 42) * 1000, 'the retry leaves at x-ratelimit-reset, not before');
  assert.ok(fixture.clock.sleeps.includes(7000));
});

test('during a secondary-limit pause no worker sends a request', async () => {
  for (const requestConcurrency of [1, 4]) {
    // The first request of a repository unit: three other workers are busy with theirs.
    fixture.standIn.fail('secondary-rate-limit', (path) => path.startsWith('/repos/'), { retryAfter: 5 });
    const { requests } = await run({ concurrency: 4, requestConcurrency });
    const index = requests.findIndex((r) => r.status === 403);
    const limited = requests[index]!;
    const later: LoggedRequest[] = requests.slice(index + 1);
    assert.ok(later.length > 10, 'other repositories were still being synced');
    // Requests already in flight when the 403 came back may land after it, at the same instant; nothing else.
    const during = later.filter((r) => r.at < limited.at + 5000);
    assert.ok(
      during.length <= requestConcurrency - 1 && during.every((r) => r.at === limited.at),
      `concurrency ${requestConcurrency}: ${during.length} requests sent during the pause`,
    );
  }
});

async function forget(): Promise<void> {
  await sql`DELETE FROM sync_requests`.execute(fixture.database.db);
  await sql`DELETE FROM sync_state`.execute(fixture.database.db);
  await sql`DELETE FROM repositories`.execute(fixture.database.db);
}

test('a run that spends its budget stops with its report, and the next run resumes where it stopped', async () => {
  await forget();
  const stopped = await run({ budget: 60 }).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(stopped instanceof SyncStopped, String(stopped));
  assert.match(stopped.message, /budget of 60 counted requests/);
  assert.equal(stopped.report.requests.counted, 60);
  assert.match(stopped.report.stopped ?? '', /the next run resumes/);
  const done = stopped.report.repositories;
  assert.ok(done > 0 && done < 39, `${done} repositories done`);

  // The repositories whose unit the stopped run committed.
  const { rows } = await sql<{ name: string }>`
    SELECT lower(r.owner_login || '/' || r.name) AS name FROM repositories r
    WHERE EXISTS (SELECT 1 FROM sync_requests s WHERE s.scope = 'github:repo:' || r.github_id)`.execute(
    fixture.database.db,
  );
  const finished = rows.map((row) => row.name);
  assert.ok(finished.length > 0);

  const { requests } = await run();
  assert.deepEqual(await storedRecords(fixture.database.db), servedRecords(fixture.standIn.organizations));
  const refetched = requests.filter(
    (r) =>
      r.status === 200 &&
      finished.some((name) => r.path.toLowerCase().startsWith(`/repos/${name}/`)) &&
      !/\/issues\?.*since=/.test(r.path),
  );
  assert.deepEqual(
    refetched.map((r) => r.path),
    [],
    'what the stopped run finished is not fetched again (304s are free)',
  );
});

test('Retry-After in seconds or as an HTTP date', () => {
  const now = Date.UTC(2026, 0, 1, 12);
  assert.equal(retryAfterMs('7', now), 7000);
  assert.equal(retryAfterMs('Thu, 01 Jan 2026 12:00:30 GMT', now), 30_000);
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(null, now), undefined);
});
