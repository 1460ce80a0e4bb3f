// npm run bench: load tests on 127.0.0.1, everything measured in one run so that ratios hold on a
// noisy machine. For each endpoint: a bare node:http server returning a constant body of the same
// size (the ceiling), then the service cached and uncached, on PGlite and on PostgreSQL.
// wrk is used when installed (apt-get install wrk), else autocannon; results go to bench/RESULTS.md.
// BENCH_SECONDS (8) is the length of each measured row, BENCH_WARMUP_SECONDS (2) the unrecorded load before it.
// The MCP endpoint's `get` of the chapter detail is measured beside the REST detail (it makes the same REST request
// in-process): the report gives the ratio of their p50.
// Each row also gives the CPU time per request of the server's process (and of PostgreSQL's processes), read from
// /proc over the measured seconds. The ceilings are a bare node:http server sending the same body, once with only its
// own two headers and once with every header of the service's cached answer, each measured right before the cached
// row it is set against (for each engine), so that a ratio is of rows a minute apart. On PostgreSQL, the uncached
// issues page is also set against pgbench running its SQL (one client; plain and prepared) and against a peer, Platformatic DB
// 2.61 over the same table (bench/peer.ts installs it into node_modules/.cache, not into the project), measured twice,
// each time right after one of our two prepared rounds of the uncached rows. The goals of
// issue 32 are summed up as ratios at the end of bench/RESULTS.md, with the load average of the run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase, pgliteDir } from '../src/db/index.ts';
import { prepareBenchData } from './seed.ts';
import { backendMicros, backendMicrosBetween, cpuMicros, postgresPids } from './cpu.ts';
import {
  MCP_GET,
  MCP_HEADERS,
  runLoad,
  startNode,
  stopChild,
  waitForServer,
  type LoadRequest,
  type LoadResult,
} from './load.ts';
import { captureSql, inline, pgbench } from './pgbench.ts';
import { PEER_ISSUES_PAGE, startPeer } from './peer.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
/** Seconds of unrecorded load before each measured row. */
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const CONNECTIONS = 50;
const LOAD_AT_START = os.loadavg();
const ISSUES = 5_000;

interface Endpoint {
  name: string;
  path: string;
  /** A POST with this body (the MCP endpoint), instead of a GET. */
  request?: LoadRequest;
}

const REST_DETAIL = 'chapter detail';
/** The target of a ceiling answering a POST of the endpoint's body (read and parsed) instead of a GET. */
const BARE_POST = ', a POST of its body';
/** A ceiling's row names the service whose cached row it was measured right before. */
const BESIDE = ', right before ';
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
  /** CPU µs per request of the server's process, and of PostgreSQL's processes (absent for the ceilings and PGlite). */
  cpu?: number;
  dbCpu?: number;
  /** Header fields of the answer, but Date, Connection and Keep-Alive (which every Node server sends). */
  headers?: number;
}

const ISSUES_PAGE = 'issues list, 100 items';

/**
 * One measured row: the warm-up, then the measured seconds with the CPU time of `pids` (and of the PostgreSQL backends
 * serving `database`, its URL, when given) read before and after, per request answered. The backends of the bench's
 * database only (cpu.ts, backendMicros): the whole cluster's processes also counted every other session of the
 * shared PostgreSQL (test runs, other benches), which moved our figure and the peer's alike and each row differently.
 */
async function measured(
  url: string,
  headers: Record<string, string>,
  pids: readonly number[],
  database: string | undefined,
  request?: LoadRequest,
): Promise<LoadResult & { cpu: number; dbCpu?: number }> {
  await runLoad(url, headers, CONNECTIONS, WARMUP, 0, request);
  const db0 = database ? await backendMicros(database) : undefined;
  const server0 = await cpuMicros(pids);
  const result = await runLoad(url, headers, CONNECTIONS, DURATION, 0, request);
  const server1 = await cpuMicros(pids);
  const db1 = database ? await backendMicros(database) : undefined;
  const requests = Math.max(1, result.rps * DURATION);
  return {
    ...result,
    cpu: round((server1 - server0) / requests),
    ...(db0 && db1 ? { dbCpu: round(backendMicrosBetween(db0, db1) / requests) } : {}),
  };
}

const round = (x: number) => Math.round(x * 10) / 10;

function portOf(n: number): number {
  return 18_000 + n;
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
  answers?: Map<string, Answer>,
) {
  for (const cached of modes) {
    const port = portOf(rows.length + 10);
    const server = startNode(['--import', 'tsx', 'src/server.ts'], {
      ...env,
      PORT: String(port),
      RATE_LIMIT_PER_SECOND: '1000000',
      REST_AUTH: 'required',
      RESPONSE_CACHE: String(cached),
      LOG_LEVEL: 'warn',
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForServer(`${base}/status/`);
      for (const endpoint of ENDPOINTS) {
        const url = `${base}${endpoint.path}`;
        const check = await send(base, endpoint, key);
        const text = await check.text();
        if (check.status !== 200 || text.includes('"isError"'))
          throw new Error(`${endpoint.path}: ${check.status} ${text}`);
        // The ceilings of a cached row are measured right before it, so that a ratio is of rows a minute apart at
        // most, not of rows minutes apart on a machine whose speed drifts by a third from one minute to the next.
        const answer = answers?.get(endpoint.name);
        if (cached && answer) await measureCeilings(endpoint.name, answer, rows, ceilings, label);
        const headers = { 'x-api-key': key, ...(endpoint.request ? MCP_HEADERS : {}) };
        const result = await measured(url, headers, [server.pid!], env.DATABASE_URL, endpoint.request);
        const target = `${label}, ${cached ? 'cached' : 'uncached'}`;
        rows.push({
          ...result,
          endpoint: endpoint.name,
          target,
          ceiling: ceilings.get(endpoint.name),
          headers: fieldCount(check.headers),
        });
        console.error(
          `${endpoint.name} | ${target}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}, timeouts ${result.timeouts}`,
        );
      }
    } finally {
      await stopChild(server);
    }
  }
}

/** What a cached answer of the service sent: its body and its header fields (but those every Node server sends). */
interface Answer {
  body: Buffer;
  headers: [string, string][];
}

const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

function fieldCount(headers: Headers): number {
  return [...headers.keys()].filter((name) => !NODE_OWN.has(name)).length;
}

/**
 * The ceilings: a bare node:http server sending the body with its two own headers (content-type, content-length),
 * then the same body with every header field of the service's cached answer (bench/bare-server.js).
 */
async function measureCeilings(
  name: string,
  answer: Answer,
  rows: Row[],
  ceilings: Map<string, number>,
  beside: string,
): Promise<void> {
  // A POST endpoint's floor too: the same body and fields answered to a POST of its body, which the server reads.
  const request = ENDPOINTS.find((e) => e.name === name)?.request;
  for (const [same, post] of [[false, false], [true, false], ...(request ? [[true, true]] : [])] as const) {
    const file = path.join(os.tmpdir(), `cds-bench-body-${process.pid}`);
    const headersFile = `${file}.headers.json`;
    await fs.writeFile(file, answer.body);
    await fs.writeFile(headersFile, JSON.stringify(answer.headers));
    const port = portOf(900 + rows.length);
    const server = startNode(['bench/bare-server.js', String(port), file, ...(same ? [headersFile] : [])], {});
    try {
      await waitForServer(`http://127.0.0.1:${port}/`);
      const check = await fetch(`http://127.0.0.1:${port}/`);
      const result = post
        ? await measured(`http://127.0.0.1:${port}/`, MCP_HEADERS, [server.pid!], undefined, request)
        : await measured(`http://127.0.0.1:${port}/`, {}, [server.pid!], undefined);
      if (!same) ceilings.set(name, result.rps);
      rows.push({
        ...result,
        endpoint: name,
        target: `bare node:http, ${answer.body.length} bytes${same ? ", the service's headers" : ''}${post ? BARE_POST : ''}${BESIDE}${beside}`,
        ceiling: ceilings.get(name),
        headers: fieldCount(check.headers),
      });
      console.error(
        `${name} | ceiling${same ? ', same headers' : ''}${post ? ', POST' : ''} beside ${beside}: ${Math.round(result.rps)} req/s`,
      );
    } finally {
      await stopChild(server);
      await fs.rm(file, { force: true });
      await fs.rm(headersFile, { force: true });
    }
  }
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
    await prepareBenchData(lite.db, ISSUES);
    await lite.close();
    const liteEnv = { DATA_DIR: dataDir };
    const liteKey = await userAndKey(liteEnv);

    const answers = new Map<string, Answer>();
    {
      const port = portOf(1);
      const server = startNode(['--import', 'tsx', 'src/server.ts'], {
        ...liteEnv,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_SECOND: '1000000',
      });
      try {
        await waitForServer(`http://127.0.0.1:${port}/status/`);
        for (const e of ENDPOINTS) {
          await send(`http://127.0.0.1:${port}`, e, liteKey);
          // The second answer: a cached one, with the headers of a hit.
          const res = await send(`http://127.0.0.1:${port}`, e, liteKey);
          const headers = [...res.headers].filter(([name]) => !NODE_OWN.has(name) && name !== 'content-length');
          answers.set(e.name, { body: Buffer.from(await res.arrayBuffer()), headers });
        }
      } finally {
        await stopChild(server);
      }
    }
    const ceilings = new Map<string, number>();
    await measureService('PGlite', liteEnv, liteKey, rows, ceilings, [true, false], answers);

    if (pgAvailable) {
      const server = await openDatabase({ databaseUrl: pgUrl });
      await prepareBenchData(server.db, ISSUES);
      await server.close();
      const pgEnv = { DATABASE_URL: pgUrl };
      const pgKey = await userAndKey(pgEnv);
      await measureService('PostgreSQL', pgEnv, pgKey, rows, ceilings, [true, false], answers);
      // The peer right after each of our two prepared rounds, so that the machine's drift over the run (these machines
      // move by a third from one minute to the next) falls on both sides of the ratio alike (issue 46).
      await measurePeer(pgUrl, rows, '');
      // The uncached rows again without prepared statements (DATABASE_PREPARED_STATEMENTS=false), then with them once
      // more, so that their ratio is not the order's (issue 32, item 2).
      const unprepared = { ...pgEnv, DATABASE_PREPARED_STATEMENTS: 'false' };
      await measureService('PostgreSQL unprepared', unprepared, pgKey, rows, ceilings, [false]);
      await measureService('PostgreSQL, round 2', pgEnv, pgKey, rows, ceilings, [false]);
      await measurePeer(pgUrl, rows, ', round 2');
      await measureService('PostgreSQL unprepared, round 2', unprepared, pgKey, rows, ceilings, [false]);
      await measureDatabaseCeilings(pgUrl, rows);
    }
  } finally {
    if (pgAvailable) await admin.query(`DROP DATABASE IF EXISTS ${benchDb} WITH (FORCE)`).catch(() => {});
    await admin.end().catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  await fs.writeFile(path.join(ROOT, 'bench/RESULTS.md'), report(rows));
  console.error('written bench/RESULTS.md');
}

/** The uncached issues page's SQL run by pgbench, one client, plain and prepared: PostgreSQL's own ceiling. */
async function measureDatabaseCeilings(url: string, rows: Row[]): Promise<void> {
  const page = ENDPOINTS.find((e) => e.name === ISSUES_PAGE)!;
  const statements = (await captureSql(url, [page.path])).get(page.path)!.map(inline);
  for (const prepared of [false, true]) {
    const db = postgresPids();
    const before = await cpuMicros(db);
    const result = await pgbench(url, statements, { seconds: DURATION, prepared });
    const after = await cpuMicros(db);
    const transactions = Math.max(1, result.tps * DURATION);
    rows.push({
      tool: 'pgbench',
      rps: result.tps,
      p50: Math.round(result.p50 * 100) / 100,
      p99: Math.round(result.p99 * 100) / 100,
      non2xx: 0,
      timeouts: 0,
      endpoint: ISSUES_PAGE,
      target: `pgbench, its SQL (${statements.length} statements), 1 client${prepared ? ', prepared' : ''}`,
      dbCpu: round((after - before) / transactions),
    });
    console.error(`${ISSUES_PAGE} | pgbench${prepared ? ' prepared' : ''}: ${Math.round(result.tps)} tps`);
  }
}

/** The peer (Platformatic DB 2.61, bench/peer.ts) serving the same issues page from the same database. */
async function measurePeer(url: string, rows: Row[], round: string): Promise<void> {
  const peer = await startPeer(url, portOf(950));
  if (!peer) return;
  try {
    const result = await measured(`${peer.url}${PEER_ISSUES_PAGE}`, {}, [peer.pid], url);
    rows.push({ ...result, endpoint: ISSUES_PAGE, target: `peer: Platformatic DB 2.61${round}, uncached` });
    console.error(`${ISSUES_PAGE} | peer${round}: ${Math.round(result.rps)} req/s`);
  } finally {
    await peer.stop();
  }
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
    `Load average (1, 5, 15 min) at the start of the run: ${LOAD_AT_START.map((x) => x.toFixed(2)).join(', ')}; at its end: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}.`,
    '',
    `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, ` +
      `load generator ${tool} on the same machine, ${CONNECTIONS} connections, ${DURATION} s per row after ${WARMUP} s of unrecorded warm-up, every request with a valid X-API-Key ` +
      `(limiter active, limit raised by configuration). Data: the bundled dataset plus ${ISSUES} synthetic issues. ` +
      'The ceiling of each endpoint is a bare node:http server sending a constant body of the same size, measured right ' +
      "before each engine's cached row of that endpoint (the goals set each row against the ceilings measured beside it). " +
      `Timeouts: requests not answered within the load generator's timeout (${tool === 'wrk' ? '2' : '10'} s); non-2xx: answers with another status, or connection errors.`,
    '',
    'CPU: µs per request of the server process (for PGlite it holds the database too) and of the PostgreSQL backends ' +
      "serving the bench's database (pgbench: all of PostgreSQL's processes, its connection ends with the run), over " +
      'the measured seconds. Headers: the fields of the answer but Date, Connection and Keep-Alive.',
    '',
    '| endpoint | target | req/s | p50 ms | p99 ms | ratio to ceiling | server CPU µs/req | PostgreSQL CPU µs/req | headers | non-2xx | timeouts |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.endpoint} | ${r.target} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.ceiling ? `${Math.round((r.rps / r.ceiling) * 100)}%` : ''} | ${r.cpu ?? ''} | ${r.dbCpu ?? ''} | ${r.headers ?? ''} | ${r.non2xx} | ${r.timeouts} |`,
    ),
    '',
    ...goals(rows),
    ...mcpRatios(rows),
  ];
  return lines.join('\n');
}

/** The goals of issues 32 and 46 as ratios of rows measured in this run. */
function goals(rows: Row[]): string[] {
  const cachedEndpoints = [REST_DETAIL, ISSUES_PAGE, 'chapters list, 100 items'];
  const engines = ['PGlite', 'PostgreSQL'];
  const find = (endpoint: string, target: string) => rows.find((r) => r.endpoint === endpoint && r.target === target);
  // The ceilings measured right before the engine's cached row of the endpoint.
  const bare = (endpoint: string, same: boolean, engine: string, post = false) =>
    rows.find(
      (r) =>
        r.endpoint === endpoint &&
        r.target.startsWith('bare node:http') &&
        r.target.endsWith(`${BESIDE}${engine}`) &&
        r.target.includes(BARE_POST) === post &&
        r.target.includes("the service's headers") === same,
    );
  const x = (a: number | undefined, b: number | undefined) =>
    a !== undefined && b !== undefined && b > 0 ? (a / b).toFixed(2) : 'n/a';
  const lines = [
    '## The goals of issues 32 and 46, as ratios of this run',
    '',
    '| measure | this run | goal |',
    '|---|---:|---:|',
  ];
  for (const endpoint of cachedEndpoints) {
    for (const engine of engines) {
      const hit = find(endpoint, `${engine}, cached`);
      if (!hit) continue;
      lines.push(
        `| ${endpoint}, ${engine}, cached: req/s against bare node:http | ${x(hit.rps, bare(endpoint, false, engine)?.rps)} | ≥ 0.80 |`,
        `| ${endpoint}, ${engine}, cached: req/s against bare node:http with the same ${hit.headers} headers | ${x(hit.rps, bare(endpoint, true, engine)?.rps)} | ≥ 0.90 |`,
        `| ${endpoint}, ${engine}, cached: Node CPU per request against bare | ${x(hit.cpu, bare(endpoint, false, engine)?.cpu)}× | ≤ 1.3× |`,
      );
    }
  }
  const prepared = [find(ISSUES_PAGE, 'PostgreSQL, uncached'), find(ISSUES_PAGE, 'PostgreSQL, round 2, uncached')];
  const unprepared = [
    find(ISSUES_PAGE, 'PostgreSQL unprepared, uncached'),
    find(ISSUES_PAGE, 'PostgreSQL unprepared, round 2, uncached'),
  ];
  const mean = (list: (Row | undefined)[], pick: (r: Row) => number | undefined) => {
    const values = list.map((r) => (r ? pick(r) : undefined)).filter((v): v is number => v !== undefined);
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined;
  };
  const ours = mean(prepared, (r) => r.rps);
  const oursCpu = mean(prepared, (r) => (r.cpu ?? 0) + (r.dbCpu ?? 0));
  const plain = rows.find((r) => r.endpoint === ISSUES_PAGE && r.tool === 'pgbench' && !r.target.endsWith('prepared'));
  const pgPrepared = rows.find(
    (r) => r.endpoint === ISSUES_PAGE && r.tool === 'pgbench' && r.target.endsWith('prepared'),
  );
  // The peer's two rounds, each measured right after one of ours: their means against ours.
  const peers = rows.filter((r) => r.endpoint === ISSUES_PAGE && r.target.startsWith('peer'));
  const peerRps = mean(peers, (r) => r.rps);
  const peerCpu = mean(peers, (r) => (r.cpu ?? 0) + (r.dbCpu ?? 0));
  if (ours !== undefined) {
    lines.push(
      `| issues page, uncached: prepared statements against none (mean of 2 rounds each), req/s | ${x(
        ours,
        mean(unprepared, (r) => r.rps),
      )}× | ≥ 1.3× |`,
      `| issues page, uncached: req/s against pgbench running its SQL, 1 client | ${x(ours, plain?.rps)} | |`,
      `| issues page, uncached: req/s against pgbench, prepared | ${x(ours, pgPrepared?.rps)} | |`,
      `| issues page, uncached: req/s against the peer (means of 2 rounds each, the peer's right after ours) | ${x(ours, peerRps)}× | ≥ 2× |`,
      `| issues page, uncached: CPU per page (Node + PostgreSQL) against the peer's (means of 2 rounds each) | ${x(oursCpu, peerCpu)}× | ≤ 0.6× |`,
    );
  }
  for (const engine of engines) {
    const mcp = find(MCP_DETAIL, `${engine}, cached`);
    const rest = find(REST_DETAIL, `${engine}, cached`);
    if (mcp && rest)
      lines.push(
        `| MCP \`get\`, ${engine}, cached: req/s against the REST detail's | ${x(mcp.rps, rest.rps)} | ≥ 0.80 |`,
        `| MCP \`get\`, ${engine}, cached: server CPU per request against the REST detail's | ${x(mcp.cpu, rest.cpu)}× | |`,
      );
  }
  // The floor of those two: bare node:http answering a POST of the MCP body (read, parsed) against a GET, same answer.
  for (const engine of engines) {
    const barePost = bare(MCP_DETAIL, true, engine, true);
    const bareGet = bare(MCP_DETAIL, true, engine);
    if (barePost && bareGet)
      lines.push(
        `| bare node:http, the MCP answer, right before the ${engine} rows: req/s of a POST of the MCP body against a GET (the floor of the MCP ratio) | ${x(barePost.rps, bareGet.rps)} | |`,
        `| bare node:http, the MCP answer, right before the ${engine} rows: CPU per request of the POST against the GET | ${x(barePost.cpu, bareGet.cpu)}× | |`,
      );
  }
  // How much room the two-field goal leaves: bare with the service's fields against bare with two.
  for (const endpoint of cachedEndpoints)
    for (const engine of engines) {
      const same = bare(endpoint, true, engine);
      const two = bare(endpoint, false, engine);
      if (same && two)
        lines.push(
          `| bare node:http, ${endpoint}, right before the ${engine} rows: req/s with the service's fields against two (the most a cached answer can reach of bare with two fields) | ${x(same.rps, two.rps)} | |`,
        );
    }
  return [
    ...lines,
    '',
    'Where a goal is not met, what shows why: for the cached answers, [CACHED-HITS.md](CACHED-HITS.md) (the profile ' +
      "of a hit against bare, and bare's own answer sent from a process that holds the service: `CACHED_AB_FLOOR=1 " +
      'node --import tsx bench/cached-ab.ts`); for the MCP `get`, the floor rows above and [POST-FLOOR.md](POST-FLOOR.md) ' +
      "(what Node's HTTP server costs for a POST with a body against a GET).",
    '',
  ];
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
      'through `GET /api/v0/chapters/london`. Cached, both are answered before routing: the REST detail from the ' +
      "response cache, the MCP call from the MCP endpoint's kept results (src/mcp/mcp.early.ts, issue 46).",
    '',
    '| target | REST p50 ms | MCP p50 ms | MCP / REST | REST req/s | MCP req/s |',
    '|---|---:|---:|---:|---:|---:|',
    ...lines,
    '',
  ];
}

await main();
