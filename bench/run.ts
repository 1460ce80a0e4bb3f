// npm run bench: load tests on 127.0.0.1, everything measured in one run so that ratios hold on a
// noisy machine. For each endpoint: a bare node:http server returning a constant body of the same
// size (the ceiling), then the service cached and uncached, on PGlite and on PostgreSQL.
// wrk is used when installed (apt-get install wrk), else autocannon; results go to bench/RESULTS.md.
// BENCH_SECONDS (8) is the length of each measured row, BENCH_WARMUP_SECONDS (2) the unrecorded load before it.
// The MCP endpoint's `get` of the chapter detail is measured beside the REST detail (it makes the same REST request
// in-process): the report gives the ratio of their p50.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase, pgliteDir, type Db } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { analyze, importDataset } from '../src/data/import/dataset.import.ts';
import { seedIssues } from './seed.ts';
import { runLoad, type LoadRequest, type LoadResult } from './load.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
/** Seconds of unrecorded load before each measured row. */
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const CONNECTIONS = 50;
const ISSUES = 5_000;

interface Endpoint {
  name: string;
  path: string;
  /** A POST with this body (the MCP endpoint), instead of a GET. */
  request?: LoadRequest;
}

const MCP_GET: LoadRequest = {
  method: 'POST',
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'get', arguments: { resource: 'chapters', id: 'london' } },
  }),
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const REST_DETAIL = 'chapter detail';
const MCP_DETAIL = 'chapter detail, MCP get';

const ENDPOINTS: Endpoint[] = [
  { name: 'chapters list, 100 items', path: '/api/v0/chapters/?limit=100' },
  { name: 'issues list, 100 items', path: '/api/v0/issues/?limit=100' },
  { name: REST_DETAIL, path: '/api/v0/chapters/london' },
  { name: MCP_DETAIL, path: '/mcp', request: MCP_GET },
  {
    name: 'repositories search q',
    path: '/api/v0/repositories/?q=' + encodeURIComponent('language:ruby stars:>=1') + '&limit=100',
  },
];

/** One request to an endpoint, as the load generator sends it. */
function send(base: string, endpoint: Endpoint, key: string): Promise<Response> {
  const headers = { 'x-api-key': key, ...(endpoint.request ? MCP_HEADERS : {}) };
  return fetch(`${base}${endpoint.path}`, {
    headers,
    ...(endpoint.request ? { method: endpoint.request.method, body: endpoint.request.body } : {}),
  });
}

interface Row extends LoadResult {
  endpoint: string;
  target: string;
  ceiling?: number;
}

function portOf(n: number): number {
  return 18_000 + n;
}

async function waitFor(url: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    try {
      if ((await fetch(url, { headers })).ok) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function prepare(db: Db): Promise<void> {
  await migrateToLatest(db);
  await importDataset(db);
  await seedIssues(db, ISSUES);
  // As after `cds import`: fresh statistics, so no autovacuum runs in the middle of a measurement.
  await analyze(db);
}

/** A user and a key through the operator CLI, the way an operator would do it. */
function createKey(env: Record<string, string>): string {
  const out = spawnSync(
    process.execPath,
    ['bin/cds.js', 'keys', 'create', '--user', 'bench', '--name', 'bench', '--expires-in', '1'],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    },
  );
  if (out.status !== 0) throw new Error(`cds keys create failed: ${out.stderr}`);
  return out.stdout.trim();
}

async function measureService(
  label: string,
  env: Record<string, string>,
  key: string,
  rows: Row[],
  ceilings: Map<string, number>,
  modes: boolean[] = [true, false],
) {
  for (const cached of modes) {
    const port = portOf(rows.length + 10);
    const server = start(['--import', 'tsx', 'src/server.ts'], {
      ...env,
      PORT: String(port),
      RATE_LIMIT_PER_SECOND: '1000000',
      REST_AUTH: 'required',
      RESPONSE_CACHE: String(cached),
      LOG_LEVEL: 'warn',
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(`${base}/status/`);
      for (const endpoint of ENDPOINTS) {
        const url = `${base}${endpoint.path}`;
        const check = await send(base, endpoint, key);
        const text = await check.text();
        if (check.status !== 200 || text.includes('"isError"'))
          throw new Error(`${endpoint.path}: ${check.status} ${text}`);
        const headers = { 'x-api-key': key, ...(endpoint.request ? MCP_HEADERS : {}) };
        const result = await runLoad(url, headers, CONNECTIONS, DURATION, WARMUP, endpoint.request);
        const target = `${label}, ${cached ? 'cached' : 'uncached'}`;
        rows.push({ ...result, endpoint: endpoint.name, target, ceiling: ceilings.get(endpoint.name) });
        console.error(
          `${endpoint.name} | ${target}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}, timeouts ${result.timeouts}`,
        );
      }
    } finally {
      await stop(server);
    }
  }
}

async function measureCeilings(bodies: Map<string, Buffer>, rows: Row[]): Promise<Map<string, number>> {
  const ceilings = new Map<string, number>();
  for (const [name, body] of bodies) {
    const file = path.join(os.tmpdir(), `cds-bench-body-${process.pid}`);
    await fs.writeFile(file, body);
    const port = portOf(900 + ceilings.size);
    const server = start(['bench/bare-server.js', String(port), file], {});
    try {
      await waitFor(`http://127.0.0.1:${port}/`);
      const result = await runLoad(`http://127.0.0.1:${port}/`, {}, CONNECTIONS, DURATION, WARMUP);
      ceilings.set(name, result.rps);
      rows.push({ ...result, endpoint: name, target: `bare node:http, ${body.length} bytes`, ceiling: result.rps });
      console.error(`${name} | ceiling: ${Math.round(result.rps)} req/s`);
    } finally {
      await stop(server);
      await fs.rm(file, { force: true });
    }
  }
  return ceilings;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-bench-'));
  const benchDb = `cds_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  let pgAvailable = true;
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${benchDb}`);
  } catch (error) {
    pgAvailable = false;
    console.error(`PostgreSQL at ${PG_URL} not available (${(error as Error).message}): PGlite only`);
  }
  const pgUrl = Object.assign(new URL(PG_URL), { pathname: `/${benchDb}` }).toString();
  try {
    // Same data on both engines: the bundled dataset plus synthetic issues for 100-item pages.
    const lite = await openDatabase({ dataDir: pgliteDir(dataDir) });
    await prepare(lite.db);
    await lite.close();
    const liteEnv = { DATA_DIR: dataDir };
    const liteKey = await userAndKey(liteEnv);

    const bodies = new Map<string, Buffer>();
    {
      const port = portOf(1);
      const server = start(['--import', 'tsx', 'src/server.ts'], { ...liteEnv, PORT: String(port), LOG_LEVEL: 'warn' });
      try {
        await waitFor(`http://127.0.0.1:${port}/status/`);
        for (const e of ENDPOINTS) {
          const res = await send(`http://127.0.0.1:${port}`, e, liteKey);
          bodies.set(e.name, Buffer.from(await res.arrayBuffer()));
        }
      } finally {
        await stop(server);
      }
    }
    const ceilings = await measureCeilings(bodies, rows);
    await measureService('PGlite', liteEnv, liteKey, rows, ceilings);

    if (pgAvailable) {
      const server = await openDatabase({ databaseUrl: pgUrl });
      await prepare(server.db);
      await server.close();
      const pgEnv = { DATABASE_URL: pgUrl };
      const pgKey = await userAndKey(pgEnv);
      await measureService('PostgreSQL', pgEnv, pgKey, rows, ceilings);
      // The uncached rows again without prepared statements (DATABASE_PREPARED_STATEMENTS=false), then with them once
      // more, so that their ratio is not the order's (issue 32, item 2).
      const unprepared = { ...pgEnv, DATABASE_PREPARED_STATEMENTS: 'false' };
      await measureService('PostgreSQL unprepared', unprepared, pgKey, rows, ceilings, [false]);
      await measureService('PostgreSQL, round 2', pgEnv, pgKey, rows, ceilings, [false]);
      await measureService('PostgreSQL unprepared, round 2', unprepared, pgKey, rows, ceilings, [false]);
    }
  } finally {
    if (pgAvailable) await admin.query(`DROP DATABASE IF EXISTS ${benchDb} WITH (FORCE)`).catch(() => {});
    await admin.end().catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  await fs.writeFile(path.join(ROOT, 'bench/RESULTS.md'), report(rows));
  console.error('written bench/RESULTS.md');
}

async function userAndKey(env: Record<string, string>): Promise<string> {
  const database = await openDatabase(
    env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : { dataDir: pgliteDir(env.DATA_DIR!) },
  );
  try {
    await database.db
      .insertInto('users')
      .values({ login: 'bench' })
      .onConflict((oc) => oc.doNothing())
      .execute();
  } finally {
    await database.close();
  }
  return createKey(env);
}

function report(rows: Row[]): string {
  const tool = rows[0]?.tool ?? 'unknown';
  const lines = [
    '# Benchmark results',
    '',
    `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, ` +
      `load generator ${tool} on the same machine, ${CONNECTIONS} connections, ${DURATION} s per row after ${WARMUP} s of unrecorded warm-up, every request with a valid X-API-Key ` +
      `(limiter active, limit raised by configuration). Data: the bundled dataset plus ${ISSUES} synthetic issues. ` +
      'The ceiling of each endpoint is a bare node:http server sending a constant body of the same size. ' +
      `Timeouts: requests not answered within the load generator's timeout (${tool === 'wrk' ? '2' : '10'} s); non-2xx: answers with another status, or connection errors.`,
    '',
    '| endpoint | target | req/s | p50 ms | p99 ms | ratio to ceiling | non-2xx | timeouts |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.endpoint} | ${r.target} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.ceiling ? `${Math.round((r.rps / r.ceiling) * 100)}%` : ''} | ${r.non2xx} | ${r.timeouts} |`,
    ),
    '',
    ...mcpRatios(rows),
  ];
  return lines.join('\n');
}

/** The MCP `get` against the REST detail it wraps: the ratio of their p50 for each target (goal: at most 1.5). */
function mcpRatios(rows: Row[]): string[] {
  const lines = rows
    .filter((r) => r.endpoint === MCP_DETAIL)
    .flatMap((mcp) => {
      const rest = rows.find((r) => r.endpoint === REST_DETAIL && r.target === mcp.target);
      if (!rest) return [];
      const ratio = (mcp.p50 / rest.p50).toFixed(2);
      return [
        `| ${mcp.target} | ${rest.p50} | ${mcp.p50} | ${ratio} | ${Math.round(rest.rps)} | ${Math.round(mcp.rps)} |`,
      ];
    });
  if (lines.length === 0) return [];
  return [
    '## MCP `get` against the REST detail',
    '',
    'The same chapter read through `POST /mcp` (`tools/call` of `get`, which makes the REST request in-process) and ' +
      'through `GET /api/v0/chapters/london`.',
    '',
    '| target | REST p50 ms | MCP p50 ms | MCP / REST | REST req/s | MCP req/s |',
    '|---|---:|---:|---:|---:|---:|',
    ...lines,
    '',
  ];
}

await main();
