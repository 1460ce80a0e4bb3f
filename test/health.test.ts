// Project health (issue 47, docs/health.md) through HTTP, after a GitHub sync against the stand-in: for each level a
// project that passes every check and one that fails every check that can fail, each check's value, threshold and
// pass held to this file's own computation from what the stand-in serves; the level's own release window; the
// history, append-only across syncs with the clock moved back (re-imports: health-reimport.test.ts); the ranking, filter and facet of the
// projects list; the badge; every bad input.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { syncGithub } from '../src/data/sync/github/github.sync.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { createTestDb, type TestDatabase } from './helpers.ts';
import { fakeClock } from './fake-clock.ts';
import { startGithubApiStandIn, type GithubApiStandIn } from './github-api-standin.ts';
import { entityLeader, leader, project } from './factories-community.ts';
import {
  expectedValues,
  healthProject,
  LEVELS,
  organizationOf,
  repositoryPaths,
  THRESHOLDS,
  threshold,
  WINDOW_DAYS,
  type HealthProject,
} from './health.github.ts';

const DAY = 86_400_000;
const clock = fakeClock(Date.UTC(2026, 5, 15, 12));
const NOW = clock.now();
const TODAY = new Date(NOW).toISOString().slice(0, 10);
const TOMORROW = new Date(NOW + DAY).toISOString().slice(0, 10);

const PROJECTS: HealthProject[] = LEVELS.flatMap((level) => [
  healthProject(`good-${level}`, level, true, NOW),
  healthProject(`bad-${level}`, level, false, NOW),
]);

interface Check {
  name: string;
  value: number | boolean | null;
  threshold: number | boolean;
  direction: string;
  pass: boolean | null;
  weight: number;
  window_days?: number;
}
interface Health {
  project: string;
  level: string;
  score: number;
  bucket: string;
  formula: string;
  coverage: number;
  data_version: number;
  computed_at: string;
  checks: Check[];
  metrics: Record<string, unknown>;
}

let database: TestDatabase;
let standIn: GithubApiStandIn;
let t: TestApp;
let syncAt = NOW;

const sync = () =>
  syncGithub(database.db, {
    apiUrl: standIn.url,
    clock,
    token: 'test-token',
    organizations: ['OWASP'],
    perPage: 100,
    retryBaseMs: 20,
    profileRequests: 1000,
    now: () => new Date(syncAt),
  });

before(async () => {
  database = await createTestDb();
  standIn = await startGithubApiStandIn([organizationOf(PROJECTS)], { now: clock.now });
  const db = database.db;
  for (const p of PROJECTS) {
    const row = await project(db, {
      key: p.key,
      name: p.key,
      level: p.level,
      created_at: new Date(p.createdAt).toISOString(),
      updated_at: new Date(p.createdAt).toISOString(),
      repository_paths: repositoryPaths(p),
    });
    for (let i = 0; i < p.leaders; i++)
      await entityLeader(db, { leader_id: (await leader(db)).id, project_id: row.id, position: i });
  }
  // No repository of it is mirrored: only its age and leaders are known.
  await project(db, {
    key: 'bare',
    name: 'bare',
    level: 'lab',
    created_at: new Date(NOW - 100 * DAY).toISOString(),
    repository_paths: JSON.stringify(['owasp/www-project-bare']),
  });
  const report = await sync();
  assert.equal(report.failed.length, 0, JSON.stringify(report.failed));
  t = await buildTestApp({ sharedDatabase: database });
});
after(async () => {
  await t?.close();
  await standIn?.close();
  await database?.drop();
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

async function healthOf(key: string): Promise<Health> {
  const res = await get(`/api/v0/projects/${key}/health`);
  assert.equal(res.statusCode, 200, `${key}: ${res.body}`);
  return res.json<Health>();
}

const DAYS_SINCE = ['last_commit_days', 'last_pull_request_days', 'last_release_days', 'owasp_page_last_update_days'];

/** The checks as this file computes them: thresholds from its own table, values from the served records. */
function expectedChecks(p: HealthProject, now: number): Check[] {
  const values = expectedValues(p, now);
  return THRESHOLDS.map(([name, direction, weight]) => {
    const value = values[name]!;
    const limit = threshold(name, p.level);
    let pass: boolean | null;
    if (name === 'is_funding_requirements_compliant') pass = null;
    else if (value === null) pass = false;
    else pass = direction === 'at_least' ? Number(value) >= Number(limit) : Number(value) <= Number(limit);
    const check: Check = { name, value, threshold: limit, direction, pass, weight };
    return name === 'recent_releases_count' ? { ...check, window_days: WINDOW_DAYS[p.level] } : check;
  });
}

function scoreOf(checks: Check[]): { score: number; coverage: number; bucket: string } {
  const known = checks.filter((c) => c.pass !== null).reduce((sum, c) => sum + c.weight, 0);
  const passed = checks.filter((c) => c.pass === true).reduce((sum, c) => sum + c.weight, 0);
  const score = Math.round((passed / known) * 10_000) / 100;
  const bucket = score >= 75 ? 'healthy' : score >= 50 ? 'needs_attention' : 'unhealthy';
  return { score, coverage: known / 100, bucket };
}

describe('the health of each project', () => {
  it('each check: value, threshold, direction, pass and weight as computed here, at each level', async () => {
    for (const p of PROJECTS) {
      const health = await healthOf(p.key);
      const expected = expectedChecks(p, NOW);
      assert.deepEqual(health.checks, expected, p.key);
      assert.deepEqual(
        { score: health.score, coverage: health.coverage, bucket: health.bucket },
        scoreOf(expected),
        p.key,
      );
      assert.equal(health.project, p.key);
      assert.equal(health.level, p.level);
      assert.equal(health.formula, 'nest-compatible-1');
      assert.equal(health.computed_at, new Date(NOW).toISOString());
      assert.equal(
        health.checks.reduce((sum, c) => sum + c.weight, 0),
        100,
      );
    }
  });

  it('a good project passes every check, a bad one fails every check that can fail', async () => {
    for (const level of LEVELS) {
      const good = await healthOf(`good-${level}`);
      const bad = await healthOf(`bad-${level}`);
      for (const check of good.checks) {
        // Funding is not mirrored: unknown for every project.
        const expected = check.name === 'is_funding_requirements_compliant' ? null : true;
        assert.equal(check.pass, expected, `good-${level} ${check.name}`);
      }
      for (const check of bad.checks) {
        // An incubator needs no second leader (threshold false): that check cannot fail.
        const cannotFail = check.name === 'is_leader_requirements_compliant' && level === 'incubator';
        const expected = check.name === 'is_funding_requirements_compliant' ? null : cannotFail;
        assert.equal(check.pass, expected, `bad-${level} ${check.name}`);
      }
      assert.deepEqual([good.score, good.bucket, good.coverage], [100, 'healthy', 0.95]);
      assert.equal(bad.bucket, 'unhealthy');
    }
  });

  it('the release window is the level’s own, not a fixed 60 days', async () => {
    for (const level of LEVELS) {
      const p = PROJECTS.find((x) => x.key === `good-${level}`)!;
      const check = (await healthOf(p.key)).checks.find((c) => c.name === 'recent_releases_count')!;
      assert.equal(check.window_days, WINDOW_DAYS[level]);
      assert.equal(check.value, threshold('recent_releases_count', level));
      assert.equal(check.pass, true);
      // The reference's fixed 60 days would have counted none of them (production's window is 60 days).
      const counted = p.code.releases.filter(
        (r) => r.draft !== true && NOW - Date.parse(String(r.published_at)) < 60 * DAY,
      );
      assert.equal(counted.length, level === 'production' ? check.value : 0, level);
    }
  });

  it('never is not zero days: no release, commit or pull request fails its "days since" check', async () => {
    for (const level of LEVELS) {
      const health = await healthOf(`bad-${level}`);
      for (const name of ['last_commit_days', 'last_pull_request_days', 'last_release_days']) {
        const check = health.checks.find((c) => c.name === name)!;
        assert.deepEqual([check.value, check.pass], [null, false], `${level} ${name}`);
      }
    }
  });

  it('unknown inputs are left out and the score is scaled over the known weights', async () => {
    const health = await healthOf('bare');
    const known = health.checks.filter((c) => c.pass !== null).map((c) => c.name);
    assert.deepEqual(known, ['age_days', 'is_leader_requirements_compliant']);
    for (const check of health.checks.filter((c) => c.pass === null)) assert.equal(check.value, null, check.name);
    // Age passes (100 days), a lab project without a second leader fails: 6 of 11 known points.
    assert.deepEqual([health.coverage, health.score], [0.11, Math.round((6 / 11) * 10_000) / 100]);
    for (const name of DAYS_SINCE) assert.equal(health.checks.find((c) => c.name === name)!.pass, null);
  });

  it('the metrics beside the score', async () => {
    const p = PROJECTS.find((x) => x.key === 'good-lab')!;
    const { metrics } = await healthOf(p.key);
    // Closed in the last 365 days as done: after 1, 2, 3, 10 and 30 days (not_planned and older ones left out).
    const sorted = [1, 2, 3, 10, 30];
    const percentile = (f: number) => {
      const at = f * (sorted.length - 1);
      const low = Math.floor(at);
      return sorted[low]! + (at - low) * ((sorted[low + 1] ?? sorted[low]!) - sorted[low]!);
    };
    const dates = p.code.releases
      .filter((r) => r.draft !== true && r.prerelease !== true)
      .map((r) => Date.parse(String(r.published_at)))
      .sort((a, b) => a - b);
    const gaps = dates
      .slice(1)
      .map((d, i) => (d - dates[i]!) / DAY)
      .sort((a, b) => a - b);
    const median =
      gaps.length % 2 ? gaps[(gaps.length - 1) / 2]! : (gaps[gaps.length / 2 - 1]! + gaps[gaps.length / 2]!) / 2;
    assert.deepEqual(metrics, {
      time_to_close_days: { median: percentile(0.5), p90: percentile(0.9), closed_issues: 5 },
      stale_open_issues_share: 0,
      release_interval_days_median: median,
      // Due: closed on time, closed late, open past due (the one due later is not counted).
      milestone_on_time_rate: Math.round((1 / 3) * 100) / 100,
      // Authors of the issues opened in the last 365 days (pull requests are not issues).
      issue_authors_365_days: 7,
    });
    const bad = (await healthOf('bad-lab')).metrics;
    assert.deepEqual(bad, {
      time_to_close_days: { median: null, p90: null, closed_issues: 0 },
      stale_open_issues_share: 1,
      release_interval_days_median: null,
      milestone_on_time_rate: null,
      issue_authors_365_days: 1,
    });
  });

  it('pull requests are mirrored from the issues listing, apart from issues', async () => {
    const { rows } = await sql<{ n: string; merged: string; open: string }>`
      SELECT count(*) AS n, count(merged_at) AS merged, count(*) FILTER (WHERE state = 'open') AS open
      FROM pull_requests`.execute(database.db);
    const pulls = PROJECTS.flatMap((p) => p.code.issues).filter((i) => i.pull_request !== undefined);
    assert.deepEqual(
      [Number(rows[0]!.n), Number(rows[0]!.merged), Number(rows[0]!.open)],
      [
        pulls.length,
        pulls.filter((i) => (i.pull_request as { merged_at: unknown }).merged_at !== null).length,
        pulls.filter((i) => i.state === 'open').length,
      ],
    );
    const res = await get('/api/v0/issues/?limit=1');
    const issues = PROJECTS.flatMap((p) => p.code.issues).filter((i) => i.pull_request === undefined);
    assert.equal(res.json<{ count: number }>().count, issues.length);
  });
});

describe('the projects list by health', () => {
  async function walk(query: string): Promise<string[]> {
    const keys: string[] = [];
    let url: string | undefined = `/api/v0/projects/?${query}&limit=3`;
    while (url) {
      const res = await get(url);
      assert.equal(res.statusCode, 200, res.body);
      keys.push(...res.json<{ items: { key: string }[] }>().items.map((i) => i.key));
      const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
      url = next ? next.replace(/^https?:\/\/[^/]+/, '') : undefined;
    }
    return keys;
  }

  it('ordering=health_score and -health_score: a total order, the key breaking ties, the same through the cursor', async () => {
    const keys = [...PROJECTS.map((p) => p.key), 'bare'];
    const scores = new Map<string, number>();
    for (const key of keys) scores.set(key, (await healthOf(key)).score);
    const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const ascending = [...keys].sort((a, b) => scores.get(a)! - scores.get(b)! || byKey(a, b));
    const descending = [...keys].sort((a, b) => scores.get(b)! - scores.get(a)! || byKey(a, b));
    assert.deepEqual(await walk('ordering=health_score'), ascending);
    assert.deepEqual(await walk('ordering=-health_score'), descending);
    // Ties exist (every bad project but the incubator scores 0): the key orders them.
    assert.ok(new Set(scores.values()).size < keys.length);
    const page2 = await get('/api/v0/projects/?ordering=-health_score&limit=3&page=2');
    assert.deepEqual(
      page2.json<{ items: { key: string }[] }>().items.map((i) => i.key),
      descending.slice(3, 6),
    );
  });

  it('health_bucket filters, group_by=health_bucket sums to the count', async () => {
    const all = await get('/api/v0/projects/?limit=1');
    const count = all.json<{ count: number }>().count;
    const res = await get('/api/v0/projects/?group_by=health_bucket');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{ groups: { value: string | null; count: number }[]; count: number }>();
    assert.equal(body.count, count);
    assert.equal(
      body.groups.reduce((sum, g) => sum + g.count, 0),
      count,
    );
    for (const group of body.groups) {
      const filtered = await get(`/api/v0/projects/?health_bucket=${String(group.value).toUpperCase()}&limit=100`);
      const items = filtered.json<{ items: { key: string }[]; count: number }>();
      assert.equal(items.count, group.count, String(group.value));
      for (const { key } of items.items) assert.equal((await healthOf(key)).bucket, group.value);
    }
    const healthy = body.groups.find((g) => g.value === 'healthy')?.count;
    assert.equal(healthy, LEVELS.length);
  });
});

describe('the badge', () => {
  it('Shields endpoint format, keyless, by key with or without the prefix; unknown project 404 JSON; ETag', async () => {
    const good = await t.app.inject({
      method: 'GET',
      url: '/badges/projects/WWW-PROJECT-good-lab/health.json',
      headers: { 'x-api-key': '' },
    });
    assert.equal(good.statusCode, 200, good.body);
    assert.match(String(good.headers['content-type']), /^application\/json/);
    assert.deepEqual(good.json(), {
      schemaVersion: 1,
      label: 'OWASP health',
      message: '100/100 healthy',
      color: 'brightgreen',
      cacheSeconds: 3600,
    });
    const bad = (await get('/badges/projects/bad-lab/health.json')).json<{ message: string; color: string }>();
    assert.deepEqual([bad.message, bad.color], ['0/100 unhealthy', 'red']);
    const again = await get('/badges/projects/good-lab/health.json', {
      'if-none-match': String(good.headers.etag),
    });
    assert.equal(again.statusCode, 304);
    const missing = await get('/badges/projects/no-such-project/health.json');
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: 'Project not found' });
    const long = await get(`/badges/projects/${'x'.repeat(201)}/health.json`);
    assert.equal(long.statusCode, 400, long.body);
    assert.match(String(long.headers['content-type']), /^application\/json/);
  });
});

describe('bad input', () => {
  it('every bad parameter is a 400 with a JSON body; an unknown project a 404', async () => {
    for (const url of [
      '/api/v0/projects/?ordering=health',
      '/api/v0/projects/?ordering=health_score,health_score',
      '/api/v0/projects/?health_bucket=great',
      '/api/v0/projects/?group_by=health',
      '/api/v0/projects/?health_bucket=healthy&health_bucket=unhealthy',
      '/api/v0/projects/good-lab/health/history?since=2026-13-01',
      '/api/v0/projects/good-lab/health/history?until=2026-02-30',
      '/api/v0/projects/good-lab/health/history?since=yesterday',
      `/api/v0/projects/good-lab/health/history?since=${TOMORROW}&until=${TODAY}`,
      '/api/v0/projects/good-lab/health/history?ordering=score',
      `/api/v0/projects/${'x'.repeat(201)}/health`,
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.json<{ message: string }>().message, 'Invalid request', url);
    }
    for (const url of ['/api/v0/projects/nope/health', '/api/v0/projects/nope/health/history']) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { message: 'Project not found' });
    }
  });
});

describe('the history', () => {
  interface Point {
    day: string;
    score: number;
    bucket: string;
    coverage: number;
    formula: string;
    data_version: number;
  }
  const history = async (key: string, query = '') => {
    const res = await get(`/api/v0/projects/${key}/health/history${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ items: Point[] }>().items;
  };

  it('one point per project per day, append-only across syncs with the clock moved back', async () => {
    const first = await history('good-lab');
    assert.deepEqual(
      first.map((p) => [p.day, p.score, p.bucket]),
      [[TODAY, 100, 'healthy']],
    );
    // The next day, good-lab gets 20 unanswered, unassigned open issues: three checks fail.
    const p = PROJECTS.find((x) => x.key === 'good-lab')!;
    const full = String(p.code.repository.full_name);
    const base = p.code.issues[0]!;
    for (let i = 0; i < 20; i++) {
      p.code.issues.push({
        ...base,
        id: 880_000 + i,
        number: 500 + i,
        comments: 0,
        assignee: null,
        assignees: [],
        html_url: `https://github.com/${full}/issues/${500 + i}`,
        url: `https://api.github.com/repos/${full}/issues/${500 + i}`,
        created_at: new Date(NOW + DAY / 2).toISOString(),
        updated_at: new Date(NOW + DAY / 2).toISOString(),
      });
    }
    syncAt = NOW + DAY;
    await sync();
    await t.app.shared.watcher.refresh();
    const second = await history('good-lab');
    const expected = scoreOf(expectedChecks(p, NOW + DAY));
    assert.deepEqual(
      second.map((x) => [x.day, x.score]),
      [
        [TODAY, 100],
        [TOMORROW, expected.score],
      ],
    );
    assert.ok(expected.score < 100);
    assert.deepEqual(second[0], first[0]);
    // The badge follows the new data version.
    const badge = (await get('/badges/projects/good-lab/health.json')).json<{ message: string }>();
    assert.equal(badge.message, `${Math.round(expected.score)}/100 ${expected.bucket.replace('_', ' ')}`);

    // The clock set back a day (a re-run of old data): the past day is not rewritten, no point is added.
    syncAt = NOW;
    await sync();
    await t.app.shared.watcher.refresh();
    assert.deepEqual(await history('good-lab'), second);
    assert.deepEqual(
      (await history('good-lab', `?since=${TOMORROW}`)).map((x) => x.day),
      [TOMORROW],
    );
    assert.deepEqual(
      (await history('good-lab', `?until=${TODAY}`)).map((x) => x.day),
      [TODAY],
    );
    assert.deepEqual(await history('good-lab', `?since=${TODAY}&until=${TOMORROW}`), second);
    // One point per project per day: every project has the same two days.
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM project_health_history GROUP BY project_key HAVING count(*) <> 2`.execute(database.db);
    assert.equal(rows.length, 0);
  });
});
