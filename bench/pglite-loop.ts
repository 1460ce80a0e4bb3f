// The PGlite event-loop test of bench:scale (issue 12, item 5): does a slow query on the embedded database hold up
// the answers that need no query? Builds an embedded database in a temporary DATA_DIR (migrations, then
// REPOSITORIES synthetic repositories by generate_series), starts the real server on it (listening, the
// response cache on), and measures a cached detail with one client, one request after the other, for
// PHASE_SECONDS: alone, then while another client sends slow uncached `q` searches over the repositories. The
// server's event-loop delay comes from its /metrics (prom-client's monitorEventLoopDelay, reset at each scrape).
//
//   npm run bench:scale -- --only pglite          # or: npx tsx bench/pglite-loop.ts
//   PHASE_SECONDS=5 REPOSITORIES=50000 npx tsx bench/pglite-loop.ts
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openDatabase, pgliteDir } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { stopChild, waitForServer } from './load.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PHASE_SECONDS = Number(process.env.PHASE_SECONDS ?? 5);
const REPOSITORIES = Number(process.env.REPOSITORIES ?? 30_000);
const ORGANIZATIONS = 100;

const ms = (x: number) => x.toFixed(1);
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

async function build(dataDir: string): Promise<string> {
  const database = await openDatabase({ dataDir: pgliteDir(dataDir) });
  try {
    await migrateToLatest(database.db);
    await sql`
      INSERT INTO organizations (github_id, login, name, created_at, updated_at)
      SELECT 90000000 + g, 'org-' || g, 'Organization ' || g, timestamptz '2010-01-01' + g * interval '1 day', timestamptz '2020-01-01'
      FROM generate_series(0, ${sql.lit(ORGANIZATIONS - 1)}) AS g`.execute(database.db);
    await sql`
      INSERT INTO repositories (github_id, owner_login, organization_id, name, description, language, stars_count, forks_count, url, created_at, updated_at)
      SELECT 10000000 + g, 'org-' || (g % ${sql.lit(ORGANIZATIONS)}), o.id, 'repo-' || g, 'Repository number ' || g,
             (ARRAY['Python', 'JavaScript', 'Go', 'Java', 'Rust', 'TypeScript'])[1 + g % 6], (g * 7919) % 5000, g % 300,
             'https://github.com/org-' || (g % ${sql.lit(ORGANIZATIONS)}) || '/repo-' || g,
             timestamptz '2008-01-01' + (g % 6000) * interval '1 day', timestamptz '2024-01-01' + (g % 500) * interval '1 day'
      FROM generate_series(0, ${sql.lit(REPOSITORIES - 1)}) AS g
      JOIN organizations o ON o.github_id = 90000000 + (g % ${sql.lit(ORGANIZATIONS)})`.execute(database.db);
    await sql`VACUUM ANALYZE`.execute(database.db);
    return '/api/v0/repositories/org-1/repo-1';
  } finally {
    await database.close();
  }
}

function startServer(dataDir: string, port: number): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: '',
      REDIS_URL: '',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      REST_AUTH: 'optional',
      RESPONSE_CACHE: 'true',
      // Anonymous answers stay private and carry X-Cache, which the detail phase checks: public ones leave it to the
      // edge (docs/edge.md).
      EDGE_MAX_AGE_S: '0',
      RATE_LIMIT_PER_SECOND: '1000000',
      LOG_LEVEL: 'warn',
      AUTO_IMPORT: 'false',
      METRICS_TOKEN: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The server's event-loop delay since the last scrape (prom-client resets its histogram at each one). */
async function loopDelay(base: string): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (name: string) => 1000 * Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

interface Phase {
  p50: number;
  p99: number;
  n: number;
  slow: { n: number; p50: number };
  loop: { p99: number; max: number };
}

async function phase(base: string, detailPath: string, withSlow: boolean): Promise<Phase> {
  await loopDelay(base);
  const until = performance.now() + PHASE_SECONDS * 1000;
  const samples: number[] = [];
  const slowSamples: number[] = [];
  const detail = async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const res = await fetch(`${base}${detailPath}`);
      await res.arrayBuffer();
      if (res.status !== 200 || res.headers.get('x-cache') !== 'HIT')
        throw new Error(`${detailPath}: ${res.status} ${res.headers.get('x-cache')}`);
      samples.push(performance.now() - started);
    }
  };
  const slow = async () => {
    // A different search each time, so the response cache never answers it.
    for (let n = 0; performance.now() < until; n++) {
      const started = performance.now();
      const res = await fetch(`${base}${slowPath(n)}`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${slowPath(n)}: ${res.status}`);
      slowSamples.push(performance.now() - started);
    }
  };
  await Promise.all(withSlow ? [detail(), slow()] : [detail()]);
  const sorted = samples.sort((a, b) => a - b);
  const slowSorted = slowSamples.sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    n: sorted.length,
    slow: { n: slowSorted.length, p50: quantile(slowSorted, 0.5) },
    loop: await loopDelay(base),
  };
}

// Two characters are too few for the trigram indexes: every search reads every repository's name (a sequential
// scan through cds_unaccent), and its count is new too. 500 different ones, so neither cache answers.
const slowPath = (n: number) =>
  `/api/v0/repositories/?q=${String(n % 100).padStart(2, '0')}&limit=100&page=${1 + (Math.floor(n / 100) % 5)}`;

export async function pgliteEventLoop(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-bench-pglite-'));
  let server: ChildProcess | undefined;
  try {
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    console.log(`\n## PGlite event-loop test at ${commit}, ${new Date().toISOString()}\n`);
    console.log(
      `# ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    let started = performance.now();
    const detailPath = await build(dataDir);
    console.log(
      `# embedded database: ${REPOSITORIES} repositories, built in ${ms((performance.now() - started) / 1000)} s`,
    );
    const port = 20_000 + (process.pid % 1000);
    const base = `http://127.0.0.1:${port}`;
    started = performance.now();
    server = startServer(dataDir, port);
    await waitForServer(`${base}/livez`);
    console.log(`# server listening ${ms((performance.now() - started) / 1000)} s after its start`);
    await fetch(`${base}${detailPath}`).then((res) => res.arrayBuffer());
    const alone = await phase(base, detailPath, false);
    const loaded = await phase(base, detailPath, true);
    console.log(
      `\nOne client, one cached detail after the other (\`${detailPath}\`), ${PHASE_SECONDS} s per phase; slow: one other client,`,
    );
    console.log(
      `one uncached search after the other (\`${slowPath(0)}\`: two digits, too short for a trigram index; q and page varied).\n`,
    );
    console.log(
      '| cached detail | p50 ms | p99 ms | requests | slow searches (p50 ms) | server event-loop delay p99 / max ms |',
    );
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const [name, r] of [
      ['alone', alone],
      ['while one client sends slow searches', loaded],
    ] as const) {
      console.log(
        `| ${name} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.n} | ${r.slow.n ? `${r.slow.n} (${ms(r.slow.p50)})` : ''} | ${ms(r.loop.p99)} / ${ms(r.loop.max)} |`,
      );
    }
  } finally {
    if (server) await stopChild(server);
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await pgliteEventLoop();
