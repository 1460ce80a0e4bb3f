// Project health at scale (issue 47, docs/health.md), a phase of `npm run bench:scale` (ONLY=health):
//   - every project's health computed as a sync ends (data/health/health.refresh.ts refreshHealth: the one read of
//     the inputs, the checks, the writes), with PROJECTS projects sharing out every generated repository, so the
//     computation reads all the issues, plus PULL_REQUESTS pull requests and MILESTONES milestones; goal ≤ 30 s at
//     1M issues. Twice: the first writes every row, the second (a day later) rewrites them.
//   - the health detail `/api/v0/projects/{key}/health` of a random project, one client, the response cache off;
//     goal p99 ≤ 20 ms.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openDatabase } from '../src/db/index.ts';
import { refreshHealth } from '../src/data/health/health.refresh.ts';

const PROJECTS = Number(process.env.PROJECTS ?? 1000);
const PULL_REQUESTS = Number(process.env.PULL_REQUESTS ?? 200_000);
const MILESTONES = Number(process.env.MILESTONES ?? 20_000);
const DETAIL_REQUESTS = Number(process.env.HEALTH_REQUESTS ?? 500);

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

/** PROJECTS projects, repository i in project i % PROJECTS; pull requests and milestones over the repositories. */
async function seedHealthInputs(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM projects WHERE key LIKE 'bench-%'`);
    if (Number(rows[0]!.n) >= PROJECTS) return;
    const started = performance.now();
    await client.query(`
      INSERT INTO projects (key, name, level, is_active, repository_paths, created_at, updated_at)
      SELECT 'bench-' || p, 'OWASP Bench ' || p, (ARRAY['incubator','lab','production','flagship','other'])[1 + p % 5],
             true, coalesce(paths, '[]'), timestamptz '2015-01-01' + p * interval '1 day',
             timestamptz '2024-01-01' + p * interval '1 hour'
      FROM generate_series(0, ${PROJECTS - 1}) AS p
      LEFT JOIN (
        SELECT p, jsonb_agg(path) AS paths
        FROM (SELECT (row_number() OVER (ORDER BY id) - 1) % ${PROJECTS} AS p,
                     lower(owner_login) || '/' || lower(name) AS path FROM repositories) AS numbered
        GROUP BY p
      ) AS r USING (p)`);
    await client.query(`
      INSERT INTO pull_requests (github_id, repository_id, number, state, author_login, created_at, updated_at,
                                 closed_at, merged_at)
      SELECT 400000000 + g, r.first + (hashint4extended(g, 31) & 2147483647) % r.n, g,
             CASE WHEN g % 4 = 0 THEN 'open' ELSE 'closed' END, 'user-' || (g % 5000),
             timestamptz '2020-01-01' + (g % 2000) * interval '1 day', timestamptz '2024-01-01',
             CASE WHEN g % 4 = 0 THEN NULL ELSE timestamptz '2020-01-02' + (g % 2000) * interval '1 day' END,
             CASE WHEN g % 4 = 1 THEN timestamptz '2020-01-02' + (g % 2000) * interval '1 day' END
      FROM generate_series(1, ${PULL_REQUESTS}) AS g,
           (SELECT min(id) AS first, count(*) AS n FROM repositories) AS r`);
    await client.query(`
      INSERT INTO milestones (github_id, repository_id, number, title, state, due_on, closed_at, created_at, updated_at)
      SELECT 500000000 + g, r.first + (hashint4extended(g, 37) & 2147483647) % r.n, g, 'm' || g,
             CASE WHEN g % 3 = 0 THEN 'open' ELSE 'closed' END, timestamptz '2022-01-01' + (g % 900) * interval '1 day',
             CASE WHEN g % 3 = 0 THEN NULL ELSE timestamptz '2022-01-01' + (g % 900 + g % 7 - 3) * interval '1 day' END,
             timestamptz '2021-01-01', timestamptz '2024-01-01'
      FROM generate_series(1, ${MILESTONES}) AS g,
           (SELECT min(id) AS first, count(*) AS n FROM repositories) AS r`);
    await client.query('VACUUM ANALYZE projects, pull_requests, milestones');
    console.error(
      `  ${PROJECTS} projects, ${PULL_REQUESTS} pull requests, ${MILESTONES} milestones: ${seconds(started)} s`,
    );
  } finally {
    await client.end();
  }
}

async function timeDetail(base: string, key: string, suffix: string): Promise<{ p50: number; p99: number; n: number }> {
  const samples: number[] = [];
  let state = 7;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) % PROJECTS;
  for (let i = -3; i < DETAIL_REQUESTS; i++) {
    const path = `/api/v0/projects/bench-${next()}${suffix}`;
    const started = performance.now();
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    if (i >= 0) samples.push(performance.now() - started);
  }
  const sorted = samples.sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n: samples.length };
}

export async function healthScalePhase(base: string, key: string, url: string, issues: number): Promise<void> {
  await seedHealthInputs(url);
  const database = await openDatabase({ databaseUrl: url, poolSize: 2 });
  const runs: string[] = [];
  try {
    for (const [label, now] of [
      ['first: every row written', new Date()],
      ['a day later: every row rewritten', new Date(Date.now() + 86_400_000)],
    ] as const) {
      const started = performance.now();
      const report = await refreshHealth(database.db, now);
      runs.push(
        `| ${label} | ${report.projects} | ${report.changed} | ${report.points} | ${seconds(started)} | ≤ 30 s |`,
      );
    }
  } finally {
    await database.close();
  }
  console.log(`\n## Project health (issue 47)\n`);
  console.log(
    `${issues.toLocaleString('en')} issues, every repository in one of ${PROJECTS} projects, ${PULL_REQUESTS.toLocaleString('en')} pull requests, ${MILESTONES.toLocaleString('en')} milestones.\n`,
  );
  console.log('| every project’s health, as a sync ends | projects | changed | history points | seconds | goal |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const run of runs) console.log(run);
  // The project's own detail first: the baseline of the same run on the same (shared, maybe loaded) machine.
  const project = await timeDetail(base, key, '');
  const detail = await timeDetail(base, key, '/health');
  console.log('\n| request | requests | p50 ms | p99 ms | goal |');
  console.log('|---|---:|---:|---:|---|');
  console.log(
    `| baseline: the project's detail \`/projects/bench-N\` | ${project.n} | ${project.p50.toFixed(2)} | ${project.p99.toFixed(2)} | |`,
  );
  console.log(
    `| health detail of a random project: \`/projects/bench-N/health\` | ${detail.n} | ${detail.p50.toFixed(2)} | ${detail.p99.toFixed(2)} | p99 ≤ 20 ms |`,
  );
  console.log(
    `\nLoad average: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}
