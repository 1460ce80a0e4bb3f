// npm run bench:scale: the service at the size of a real mirror (issue 12). Generates 100,000
// repositories, 100,000 members, 1,000,000 issues and 50,000 releases with INSERT … SELECT over
// generate_series into a fresh database on the PostgreSQL server, starts the real server on it
// (listening, a real API key, response cache off), and reports p50/p99 of:
//   - the first page of /issues/, page 5,000, the same two at 30 a page (page 16,667: between two boundaries), the
//     page of the big repository filtered by state, a `q` search of /repositories/, each requested one after the
//     other by one client, with the database's CPU per request (its backends' /proc over CPU_REQUESTS more requests);
//   - an issue detail while 20 other clients walk deep pages of /issues/, with the count of 5xx;
//   - the SQL the app sends for each of those lists, run by pgbench (one client) as the ceiling.
//   - the ranked search GET /api/v0/search/ (bench/search-scale.ts): 2–3-word queries, half with a typo, over the
//     generated rows (word-based issue titles, repository names, member names), and on PGlite with the bundled data.
// The database is dropped at the end (KEEP=1 keeps it). Then the PGlite event-loop test (bench/pglite-loop.ts).
// Results: bench/SCALE.md, the search's bench/SEARCH.md.
//
//   npm run bench:scale                          # PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL to change)
//   ISSUES=100000 ITERATIONS=20 npm run bench:scale
//   npm run bench:scale -- --only pglite         # the PGlite event-loop test alone
//   ONLY=search npm run bench:scale              # the search alone (generates the data, then both engines)
//   ONLY=agents npm run bench:scale              # near (100,000 chapters) and group_by (1M issues), bench/agents-scale.ts
//   ONLY=dumps npm run bench:scale               # `cds dumps build` on the 1M issues: records/s, peak RSS (bench/dumps-scale.ts)
//   ONLY=health npm run bench:scale              # every project's health after a sync, the health detail (bench/health-scale.ts)
//   ONLY=contribute npm run bench:scale          # GET /api/v0/contribute/ on the 1M issues, p99 uncached (bench/contribute-scale.ts)
//   KEEP=1 ONLY=search npm run bench:scale; REUSE=cds_scale_… ONLY=search npm run bench:scale   # again, on the kept data
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { sql, type CompiledQuery } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { runImport, writeDataset } from './scale-import.ts';
import { captureSql, inline, pgbench, timing, type Timing } from './pgbench.ts';
import { cpuMicros } from './cpu.ts';
import { stopChild, waitForServer } from './load.ts';
import { pgliteEventLoop } from './pglite-loop.ts';
import { agentsScalePhase } from './agents-scale.ts';
import { dumpsScalePhase } from './dumps-scale.ts';
import { healthScalePhase } from './health-scale.ts';
import { contributeScalePhase } from './contribute-scale.ts';
import {
  issueBody,
  issueTitle,
  memberBio,
  memberLogin,
  memberNameParts,
  organizationName,
  repositoryDescription,
  repositoryName,
  searchPgliteBundled,
  searchScalePhase,
} from './search-scale.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPOSITORIES = Number(process.env.REPOSITORIES ?? 100_000);
const MEMBERS = Number(process.env.MEMBERS ?? 100_000);
const ISSUES = Number(process.env.ISSUES ?? 1_000_000);
const RELEASES = Number(process.env.RELEASES ?? 50_000);
const ITERATIONS = Number(process.env.ITERATIONS ?? 30);
const WARM_UP = 3;
const CLIENTS = 20;
const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 10);
const PGBENCH_SECONDS = Number(process.env.PGBENCH_SECONDS ?? 5);
/** One issue in BIG_EVERY goes to the big repository: 56k of 1M. */
const BIG_EVERY = 18;
const ORGANIZATIONS = 200;
/**
 * Which parts run: `lists` (one client per list, pgbench), `load` (the detail under deep-page walkers), `search`
 * (GET /api/v0/search/ on the generated database), `search-pglite` (the same on PGlite with the bundled data),
 * `import`, `pglite` (the event-loop test), `agents` (near and group_by, bench/agents-scale.ts), `dumps` (the build of
 * the bulk dumps, bench/dumps-scale.ts), `contribute` (GET /api/v0/contribute/, bench/contribute-scale.ts), `health`
 * (project health, bench/health-scale.ts).
 */
// `--only pglite` is PHASES=pglite; ONLY=search (or `--only search`) is PHASES=search,search-pglite.
const ONLY =
  (process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined) ?? process.env.ONLY;
const PHASES = new Set(
  (ONLY === 'search'
    ? 'search,search-pglite'
    : (ONLY ?? process.env.PHASES ?? 'lists,load,search,search-pglite,agents,contribute,dumps,health,import,pglite')
  )
    .split(',')
    .map((p) => p.trim()),
);
/** A database kept by an earlier run (KEEP=1 prints its name): measured as it is, neither generated nor dropped. */
const REUSE = process.env.REUSE;

const ms = (x: number) => x.toFixed(1);

async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------- data

const hash = (seed: number) => `((hashint4extended(g, ${seed}) & 2147483647)::float8 / 2147483648)`;
const COMPANIES = Array.from({ length: 50 }, (_, i) => `company-${i}`);
const LOCATIONS = Array.from({ length: 100 }, (_, i) => `city-${i}`);
const words = (list: string[]) => `(ARRAY[${list.map((w) => `'${w}'`).join(',')}])`;
const member = memberNameParts(hash);

async function seed(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const step = async (label: string, text: string) => {
    const started = performance.now();
    await client.query(text);
    console.error(`  ${label}: ${ms((performance.now() - started) / 1000)} s`);
  };
  try {
    // As a bulk load would: the secondary indexes are built after the rows (a sorted build, not 1M insertions
    // into each of them). Constraint indexes (primary keys, unique) stay.
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(`
      SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
      WHERE i.schemaname = 'public' AND i.tablename IN ('repositories', 'members', 'issues', 'releases')
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`);
    for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
    await step(
      'organizations',
      `INSERT INTO organizations (github_id, login, name, created_at, updated_at)
       SELECT 90000000 + g, 'org-' || g, ${organizationName(hash)}, timestamptz '2010-01-01' + g * interval '1 day', timestamptz '2020-01-01' + g * interval '1 day'
       FROM generate_series(0, ${ORGANIZATIONS - 1}) AS g`,
    );
    // Repository 1 is org-0/big: the repository that holds BIG_EVERY's share of the issues.
    await step(
      `${REPOSITORIES} repositories`,
      `INSERT INTO repositories (github_id, owner_login, organization_id, name, description, language, stars_count, forks_count, url, created_at, updated_at)
       SELECT 10000000 + g, 'org-' || (g % ${ORGANIZATIONS}), o.id, r.name, ${repositoryDescription(hash)},
              ${words(['Python', 'JavaScript', 'Go', 'Java', 'Rust', 'TypeScript'])}[1 + floor(${hash(1)} * 6)::int],
              floor(exp(${hash(2)} * 9))::int, floor(exp(${hash(3)} * 6))::int,
              'https://github.com/org-' || (g % ${ORGANIZATIONS}) || '/' || r.name,
              timestamptz '2008-01-01' + (${hash(4)} * 6000) * interval '1 day',
              timestamptz '2024-01-01' + (${hash(5)} * 500) * interval '1 day'
       FROM (
         -- Word-based names ("token-cache", "secure-login-scanner"), a number after a repeat within an owner.
         SELECT g, CASE WHEN g = 0 THEN 'big' WHEN n = 1 THEN base ELSE base || '-' || n END AS name
         FROM (SELECT g, base, row_number() OVER (PARTITION BY g % ${ORGANIZATIONS}, base ORDER BY g) AS n
               FROM (SELECT g, ${repositoryName(hash)} AS base FROM generate_series(0, ${REPOSITORIES - 1}) AS g) AS named) AS numbered
       ) AS r(g, name)
       JOIN organizations o ON o.github_id = 90000000 + (g % ${ORGANIZATIONS})
       ORDER BY g`,
    );
    await step(
      `${MEMBERS} members`,
      `INSERT INTO members (github_id, login, name, bio, avatar_url, url, company, location, created_at, updated_at)
       SELECT 20000000 + g, login, CASE WHEN ${hash(16)} < 0.85 THEN first || ' ' || last ELSE '' END, ${memberBio(hash)},
              'https://avatars.example/u/' || g, 'https://github.com/' || login,
              ${words(COMPANIES)}[1 + floor(${hash(6)} * ${COMPANIES.length})::int],
              ${words(LOCATIONS)}[1 + floor(${hash(7)} * ${LOCATIONS.length})::int],
              timestamptz '2009-01-01' + (${hash(8)} * 5000) * interval '1 day',
              timestamptz '2024-01-01' + (${hash(9)} * 500) * interval '1 day'
       FROM (
         -- Names from first and last names; logins from them ("mchen", "maria-chen", "chen42"), a number after a repeat.
         SELECT g, first, last, CASE WHEN n = 1 THEN base ELSE base || '-' || n END AS login
         FROM (SELECT g, first, last, base, row_number() OVER (PARTITION BY base ORDER BY g) AS n
               FROM (SELECT g, first, last, ${memberLogin('first', 'last', hash)} AS base
                     FROM (SELECT g, ${member.first} AS first, ${member.last} AS last
                           FROM generate_series(0, ${MEMBERS - 1}) AS g) AS named) AS based) AS numbered
       ) AS m
       ORDER BY g`,
    );
    const first = (await client.query<{ id: string }>(`SELECT min(id) AS id FROM repositories`)).rows[0]!.id;
    await step(
      `${ISSUES} issues`,
      `INSERT INTO issues (github_id, repository_id, number, title, body, state, url, created_at, updated_at)
       SELECT 100000000 + g,
              CASE WHEN g % ${BIG_EVERY} = 0 THEN ${first} ELSE ${first} + 1 + floor(${hash(10)} * ${REPOSITORIES - 1})::bigint END,
              g, ${issueTitle(hash)}, ${issueBody(hash)},
              CASE WHEN ${hash(11)} < 0.3 THEN 'closed' ELSE 'open' END,
              'https://github.com/x/y/issues/' || g,
              timestamptz '2012-01-01' + (${hash(12)} * 4700) * interval '1 day',
              timestamptz '2024-01-01' + (${hash(13)} * 500) * interval '1 day'
       FROM generate_series(1, ${ISSUES}) AS g`,
    );
    await step(
      `${RELEASES} releases`,
      `INSERT INTO releases (github_id, repository_id, tag_name, name, url, published_at, created_at)
       SELECT 300000000 + g, ${first} + (g % ${REPOSITORIES}), 'v' || g, 'Release ' || g, 'https://github.com/x/y/releases/v' || g,
              timestamptz '2015-01-01' + (${hash(14)} * 3500) * interval '1 day',
              timestamptz '2015-01-01' + (${hash(15)} * 3500) * interval '1 day'
       FROM generate_series(1, ${RELEASES}) AS g`,
    );
    await client.query(`SET maintenance_work_mem = '256MB'`);
    const started = performance.now();
    for (const index of indexes) await client.query(index.definition);
    console.error(`  ${indexes.length} indexes: ${ms((performance.now() - started) / 1000)} s`);
    // What autovacuum would reach before anyone measures: statistics and the visibility map.
    await step('VACUUM ANALYZE', 'VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------- cases

interface Case {
  name: string;
  path: string;
}

const CASES: Case[] = [
  { name: 'first page', path: '/api/v0/issues/?limit=100' },
  { name: 'page 5,000', path: '/api/v0/issues/?limit=100&page=5000' },
  // A page size that does not divide the boundaries' STEP: page 16,667 starts 80 rows after one (issue 32, item 5).
  { name: 'first page of 30', path: '/api/v0/issues/?limit=30' },
  { name: 'page 16,667 of 30', path: '/api/v0/issues/?limit=30&page=16667' },
  {
    name: 'big repository, open, first page',
    path: '/api/v0/issues/?organization=org-0&repository=big&state=open&limit=100',
  },
  {
    name: '`q` search (repositories, q=language:python stars:>100)',
    path: `/api/v0/repositories/?q=${encodeURIComponent('language:python stars:>100')}&limit=100`,
  },
];

/** The statements the app sends for one request of each case (bench/pgbench.ts), by the case's name. */
async function captureCases(url: string): Promise<Map<string, CompiledQuery[]>> {
  const byPath = await captureSql(
    url,
    CASES.map((c) => c.path),
  );
  return new Map(CASES.map((c) => [c.name, byPath.get(c.path)!]));
}

// ---------------------------------------------------------------- the server

function startServer(url: string, port: number, root = ROOT): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: url,
      REDIS_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      REST_AUTH: 'required',
      RESPONSE_CACHE: 'false',
      RATE_LIMIT_PER_SECOND: '1000000',
      LOG_LEVEL: 'warn',
      AUTO_IMPORT: 'false',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function createKey(url: string): string {
  const out = spawnSync(
    process.execPath,
    ['bin/cds.js', 'keys', 'create', '--user', 'bench', '--name', 'scale', '--expires-in', '1'],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url, REDIS_URL: '' },
      encoding: 'utf8',
    },
  );
  if (out.status !== 0) throw new Error(`cds keys create failed: ${out.stderr}`);
  return out.stdout.trim();
}

async function timeRequests(base: string, key: string, pathOf: () => string, iterations: number): Promise<Timing> {
  const get = async () => {
    const p = pathOf();
    const res = await fetch(`${base}${p}`, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${p}: ${res.status}`);
  };
  for (let i = 0; i < WARM_UP; i++) await get();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    await get();
    samples.push(performance.now() - started);
  }
  return timing(samples);
}

const CPU_REQUESTS = Number(process.env.CPU_REQUESTS ?? 1000);

/** CPU time (ms) the server's backends on this database have used so far: /proc of each (the server runs here). */
async function backendCpuMs(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return (await cpuMicros(rows.map((r) => r.pid))) / 1000;
  } finally {
    await client.end();
  }
}

/** The database's CPU per request of `path` (µs): CPU_REQUESTS requests one after the other, the backends' CPU. */
async function databaseCpuPerRequest(base: string, key: string, url: string, path: string): Promise<number> {
  const before = await backendCpuMs(url);
  for (let i = 0; i < CPU_REQUESTS; i++) {
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
  }
  return ((await backendCpuMs(url)) - before) * (1000 / CPU_REQUESTS);
}

// The walkers run in a worker thread of their own: on the bench's event loop, reading 200 pages/s would
// delay the detail's own answers and be counted as the server's latency.
const WALKERS = `
const { parentPort, workerData: { base, key, clients, deepPages, until } } = require('node:worker_threads');
const statuses = {};
let pages = 0;
const walker = async (n) => {
  let page = 1000 + n * 397;
  while (Date.now() < until) {
    page = 1000 + ((page * 7919) % deepPages);
    const res = await fetch(base + '/api/v0/issues/?limit=100&page=' + page, { headers: { 'x-api-key': key } }).catch(() => undefined);
    await res?.arrayBuffer();
    const status = res?.status ?? 599;
    statuses[status] = (statuses[status] ?? 0) + 1;
    pages++;
  }
};
Promise.all(Array.from({ length: clients }, (_, n) => walker(n))).then(() => parentPort.postMessage({ pages, statuses }));
`;

/** The detail, one client after the other, while CLIENTS others (another thread) walk deep pages; statuses of every answer. */
async function detailUnderLoad(base: string, key: string, detailPath: string, deepPages: number) {
  const statuses = new Map<number, number>();
  const count = (status: number, n = 1) => statuses.set(status, (statuses.get(status) ?? 0) + n);
  const until = Date.now() + LOAD_SECONDS * 1000;
  const worker = new Worker(WALKERS, { eval: true, workerData: { base, key, clients: CLIENTS, deepPages, until } });
  const walked = new Promise<{ pages: number; statuses: Record<string, number> }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const samples: number[] = [];
  const detailStatuses = new Map<number, number>();
  while (Date.now() < until) {
    const started = performance.now();
    const res = await fetch(`${base}${detailPath}`, { headers: { 'x-api-key': key } }).catch(() => undefined);
    await res?.arrayBuffer();
    samples.push(performance.now() - started);
    count(res?.status ?? 599);
    detailStatuses.set(res?.status ?? 599, (detailStatuses.get(res?.status ?? 599) ?? 0) + 1);
  }
  const { pages, statuses: pageStatuses } = await walked;
  await worker.terminate();
  for (const [status, n] of Object.entries(pageStatuses)) count(Number(status), n);
  const errors = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
  return {
    ...timing(samples),
    pages,
    errors,
    statuses: Object.fromEntries(statuses),
    detailStatuses: Object.fromEntries(detailStatuses),
  };
}

/** The detail alone, then under CLIENTS deep-page walkers (another thread): p50/p99 and every answer's status. */
async function loadPhase(base: string, key: string, label: string): Promise<void> {
  const detailPath = `/api/v0/issues/org-0/big/${BIG_EVERY * 100}`;
  const loadBefore = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const alone = await timeRequests(base, key, () => detailPath, ITERATIONS * 3);
  const deepPages = Math.max(1, Math.floor(ISSUES / 100) - 1000);
  const loaded = await detailUnderLoad(base, key, detailPath, deepPages);
  const budget = ['LIST_POOL_SIZE', 'LIST_STATEMENT_TIMEOUT_MS', 'LIST_QUEUE_LENGTH']
    .map((v) => `${v}=${process.env[v] ?? '(default)'}`)
    .join(' ');
  console.log(`Server of ${label} (${budget}); load average before: ${loadBefore}\n`);
  console.log('| issue detail | p50 ms | p99 ms | requests | deep pages served | 5xx | statuses |');
  console.log('|---|---:|---:|---:|---:|---:|---|');
  console.log(`| alone: \`${detailPath}\` | ${ms(alone.p50)} | ${ms(alone.p99)} | ${alone.n} | | | |`);
  console.log(
    `| while ${CLIENTS} clients (another thread) walk pages 1,000–${deepPages + 1000} for ${LOAD_SECONDS} s | ${ms(loaded.p50)} | ${ms(loaded.p99)} | ${loaded.n} | ${loaded.pages} | ${loaded.errors} | ${JSON.stringify(loaded.statuses)} (detail: ${JSON.stringify(loaded.detailStatuses)}) |`,
  );
  console.log(
    `\nDetail under load / alone (p99): ${(loaded.p99 / alone.p99).toFixed(1)}×; load average after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
}

// ---------------------------------------------------------------- main

/** Dataset folders of IMPORT_ISSUES issues each (default 100,000 and 1,000,000), each imported by `cds import --from` on a fresh database. */
async function importPhase(): Promise<void> {
  const sizes = (process.env.IMPORT_ISSUES ?? '100000,1000000').split(',').map(Number);
  const roots: [string, string][] = [
    ['this checkout', ROOT],
    ...(process.env.COMPARE_ROOT
      ? [[process.env.COMPARE_ROOT, path.resolve(process.env.COMPARE_ROOT)] as [string, string]]
      : []),
  ];
  console.log(
    `## Import: \`cds import --from <folder>\` (a child process) on a fresh database; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  console.log(
    '| code | issues | repositories | members | releases | files | seconds | issues/s | peak RSS MB | KB per issue | exit |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const issues of sizes) {
    const size = {
      issues,
      repositories: Math.min(REPOSITORIES, Math.max(1, Math.floor(issues / 10))),
      members: Math.min(MEMBERS, Math.max(1, Math.floor(issues / 10))),
      releases: Math.min(RELEASES, Math.floor(issues / 20)),
    };
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-scale-import-'));
    try {
      const started = performance.now();
      const files = await writeDataset(dir, size, path.join(ROOT, 'data', 'owasp'));
      console.error(`  dataset of ${issues} issues: ${files} files in ${ms((performance.now() - started) / 1000)} s`);
      for (const [label, root] of roots) {
        const result = await runImport(root, SERVER_URL, dir);
        if (result.exitCode !== 0) console.error(result.stdout);
        console.log(
          `| ${label} | ${issues} | ${size.repositories} | ${size.members} | ${size.releases} | ${files} | ${ms(result.seconds)} | ${Math.round(issues / result.seconds)} | ${Math.round(result.peakMb)} | ${((result.peakMb * 1024) / issues).toFixed(2)} | ${result.exitCode} |`,
        );
        if (process.env.IMPORT_REPORT) console.log(`\n\`\`\`\n${result.stdout.trim()}\n\`\`\`\n`);
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }
  console.log(
    `\nLoad average after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
}

async function main(): Promise<void> {
  if (PHASES.has('import')) await importPhase();
  if (!['lists', 'load', 'search', 'agents', 'contribute', 'dumps', 'health'].some((phase) => PHASES.has(phase)))
    return;
  const name = REUSE ?? `cds_scale_${crypto.randomBytes(5).toString('hex')}`;
  const url = Object.assign(new URL(SERVER_URL), { pathname: `/${name}` }).toString();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  console.log(`# bench:scale at ${commit}, ${new Date().toISOString()}`);
  console.log(
    `# ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (!REUSE) await admin(`CREATE DATABASE ${name}`);
  let server: ChildProcess | undefined;
  try {
    const setup = await openDatabase({ databaseUrl: url });
    const version = (await sql<{ v: string }>`select current_setting('server_version') as v`.execute(setup.db)).rows[0]!
      .v;
    if (REUSE) {
      console.log(`# PostgreSQL ${version}: database ${name} as an earlier run left it (REUSE)\n`);
      await setup.close();
    } else {
      await migrateToLatest(setup.db);
      await setup.db.insertInto('users').values({ login: 'bench' }).execute();
      await setup.close();
      console.log(
        `# PostgreSQL ${version}: ${REPOSITORIES} repositories, ${MEMBERS} members, ${ISSUES} issues (1 in ${BIG_EVERY} in org-0/big), ${RELEASES} releases`,
      );
      const started = performance.now();
      await seed(url);
      console.log(`# generated in ${ms((performance.now() - started) / 1000)} s\n`);
    }

    const statements = PHASES.has('lists') ? await captureCases(url) : new Map<string, CompiledQuery[]>();
    const key = createKey(url);
    const port = 19_000 + (process.pid % 1000);
    server = startServer(url, port);
    const base = `http://127.0.0.1:${port}`;
    await waitForServer(`${base}/status/`, { seconds: 60 });

    if (PHASES.has('lists')) {
      console.log(
        `One client, one request after the other, ${ITERATIONS} after ${WARM_UP} warm-up; pgbench: the app's SQL for the same request, one client, ${PGBENCH_SECONDS} s; database CPU: the server's backends over ${CPU_REQUESTS} more requests (/proc).\n`,
      );
      console.log(
        `| request | HTTP p50 ms | HTTP p99 ms | pgbench p50 ms | pgbench p99 ms | statements | database CPU µs/request (${CPU_REQUESTS}) |`,
      );
      console.log('|---|---:|---:|---:|---:|---:|---:|');
      const cpu = new Map<string, number>();
      const results = new Map<string, Timing>();
      const databaseResults = new Map<string, Timing>();
      for (const c of CASES) {
        const http = await timeRequests(base, key, () => c.path, ITERATIONS);
        results.set(c.name, http);
        const queries = statements.get(c.name) ?? [];
        const db = await pgbench(url, queries.map(inline), { seconds: PGBENCH_SECONDS });
        databaseResults.set(c.name, db);
        const perRequest = await databaseCpuPerRequest(base, key, url, c.path);
        cpu.set(c.name, perRequest);
        console.log(
          `| ${c.name}: \`${c.path}\` | ${ms(http.p50)} | ${ms(http.p99)} | ${ms(db.p50)} | ${ms(db.p99)} | ${queries.length} | ${Math.round(perRequest)} |`,
        );
      }
      // The database's CPU per page is the goal of issue 32, item 5: a deep page ≤ 1.2× the first.
      for (const [deepName, firstName] of [
        ['page 5,000', 'first page'],
        ['page 16,667 of 30', 'first page of 30'],
      ] as const) {
        const ratio = (of: (name: string) => number) => (of(deepName) / of(firstName)).toFixed(2);
        const http = ratio((name) => results.get(name)!.p50);
        const pgbenchRatio = ratio((name) => databaseResults.get(name)!.p50);
        console.log(
          `\n${deepName} / ${firstName}: HTTP p50 ${http}×, pgbench p50 ${pgbenchRatio}×, database CPU per request ${ratio((name) => cpu.get(name)!)}×`,
        );
      }
      console.log();
    }

    if (PHASES.has('load')) {
      await loadPhase(base, key, 'this checkout');
      // The same measurement against another checkout's server (COMPARE_ROOT, e.g. main's code), on the same data.
      if (process.env.COMPARE_ROOT) {
        await stopChild(server);
        server = startServer(url, port, path.resolve(process.env.COMPARE_ROOT));
        await waitForServer(`${base}/status/`, { seconds: 60 });
        await loadPhase(base, key, process.env.COMPARE_ROOT);
      }
    }
    if (PHASES.has('search')) await searchScalePhase(base, key, url);
    if (PHASES.has('agents')) await agentsScalePhase(base, key, url, ISSUES);
    if (PHASES.has('contribute')) await contributeScalePhase(base, key, url, ISSUES);
    if (PHASES.has('dumps')) await dumpsScalePhase(ROOT, url);
    if (PHASES.has('health')) await healthScalePhase(base, key, url, ISSUES);
    if (statements.size > 0) console.log('\nSQL of each request (steady state: its total already counted):\n');
    for (const [caseName, queries] of statements) {
      for (const q of queries) console.log(`- ${caseName}: \`${inline(q).slice(0, 400)}\``);
    }
  } finally {
    if (server) await stopChild(server);
    if (process.env.KEEP || REUSE) console.error(`KEEP or REUSE is set: database ${name} kept`);
    else await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();
if (PHASES.has('search-pglite')) await searchPgliteBundled();
if (PHASES.has('pglite')) await pgliteEventLoop();
