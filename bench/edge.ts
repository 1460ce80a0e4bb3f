// npm run bench:edge (issue 44): the service behind the shipped Varnish (deploy/varnish/default.vcl). A real server
// (src/server.ts, PostgreSQL at BENCH_DATABASE_URL, a new database with the bundled data, REST_AUTH=optional,
// EDGE_PURGE=varnish:…) and Debian's varnishd in front of it (test/varnish-server.ts). wrk replays an anonymous trace,
// Zipf-distributed over the details of chapters, projects, committees and events and the pages of their lists:
//   1. against the origin alone (its own response cache warm), requests per second;
//   2. through Varnish from cold, requests per second and hit ratio (varnishstat: hits / client requests);
//   3. through Varnish again while a writer renames a chapter every WRITE_EVERY_MS: for each write, the time from its
//      commit until the edge answers the new name (polled every 10 ms), and the server's own commit-to-purge histogram
//      (cds_edge_purge_delay_seconds).
// Goals: hit ratio ≥ 90 %, ≥ 10× the origin's requests per second, commit-to-purge p95 ≤ 1 s. Results: bench/EDGE.md.
//
//   npm run bench:edge
//   SECONDS=20 CONNECTIONS=100 npm run bench:edge
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, startServer, waitFor200 } from '../test/process.ts';
import { startVarnish, varnishMissing } from '../test/varnish-server.ts';
import { cpuMicros } from './cpu.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION_S = Number(process.env.SECONDS ?? 15);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const THREADS = Number(process.env.THREADS ?? 2);
const TRACE_LENGTH = Number(process.env.TRACE ?? 50_000);
const ZIPF_S = Number(process.env.ZIPF_S ?? 1);
const WRITES = Number(process.env.WRITES ?? 20);
const WRITE_EVERY_MS = Number(process.env.WRITE_EVERY_MS ?? 500);

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function databaseUrl(name: string): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * The universe of URLs, hottest first after a shuffle, and a Zipf sample of it: the details of the records the API
 * lists (as a client finds them; not every row of a table is published) and the 20-item pages of those lists.
 */
async function trace(origin: string): Promise<{ universe: number; paths: string[] }> {
  const urls: string[] = [];
  for (const resource of ['chapters', 'projects', 'committees', 'events']) {
    const keys: string[] = [];
    for (let page = 1; ; page++) {
      const res = await fetch(`${origin}/api/v0/${resource}/?page_size=100&page=${page}`);
      if (res.status === 404) break; // past the last page
      if (!res.ok) throw new Error(`${resource} page ${page}: ${res.status}`);
      const { items } = (await res.json()) as { items: { key: string }[] };
      if (items.length === 0) break;
      keys.push(...items.map((item) => item.key));
    }
    for (const key of keys) urls.push(`/api/v0/${resource}/${encodeURIComponent(key)}`);
    const pages = Math.ceil(keys.length / 20);
    for (let page = 1; page <= pages; page++) urls.push(`/api/v0/${resource}/?page_size=20&page=${page}`);
  }
  // A fixed shuffle (a small LCG), so that every run ranks the same URLs.
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = urls.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [urls[i], urls[j]] = [urls[j]!, urls[i]!];
  }
  const weights = urls.map((_, rank) => 1 / (rank + 1) ** ZIPF_S);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const weight of weights) cumulative.push((sum += weight / total));
  const paths: string[] = [];
  for (let i = 0; i < TRACE_LENGTH; i++) {
    const r = random();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    paths.push(urls[lo]!);
  }
  return { universe: urls.length, paths };
}

/** Runs wrk over the trace (on the cores `cpus` names, when given); returns its requests per second and latency. */
async function wrk(base: string, script: string, seconds: number, cpus?: string) {
  const output = await new Promise<string>((resolve, reject) => {
    const args = [`-t${THREADS}`, `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', script, base];
    const child = cpus === undefined ? spawn('wrk', args) : spawn('taskset', ['-c', cpus, 'wrk', ...args]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN);
  const p99 = /\s99%\s+([\d.]+\w+)/.exec(output)?.[1] ?? '?';
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  return { rps, p99, non2xx, output };
}

/** The processes of the tree under `root`, itself included (from /proc). */
async function processTree(root: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (stat === '') continue;
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found = [root];
  for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i]!) ?? []));
  return found;
}

/** Every thread of the processes may run only on the cores `cpus` names (taskset -a). */
async function pin(pids: number[], cpus: string): Promise<void> {
  for (const pid of pids) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', () => resolve());
    });
  }
}

async function varnishCounters(workDir: string): Promise<{ hits: number; requests: number; misses: number }> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('varnishstat', ['-n', workDir, '-1', '-j']);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
  const parsed = JSON.parse(output) as { counters?: Record<string, { value: number }> } & Record<string, unknown>;
  const counters = (parsed.counters ?? parsed) as Record<string, { value?: number }>;
  const value = (name: string) => Number(counters[name]?.value ?? 0);
  return { hits: value('MAIN.cache_hit'), requests: value('MAIN.client_req'), misses: value('MAIN.cache_miss') };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

/** The server's histogram of commit-to-purge, as upper bounds: the bucket that holds the 95th percentile. */
function histogramP(metrics: string, p: number): string {
  const buckets = [...metrics.matchAll(/^cds_edge_purge_delay_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)].map((m) => ({
    le: m[1]!,
    count: Number(m[2]),
  }));
  const total = buckets.at(-1)?.count ?? 0;
  const found = buckets.find((bucket) => bucket.count >= (p / 100) * total);
  return total === 0 ? 'no purge' : `≤ ${found?.le} s (of ${total} changes)`;
}

async function main() {
  const missing = await varnishMissing();
  if (missing) throw new Error(missing);
  const loadBefore = load();
  const name = `cds_bench_edge_${process.pid}`;
  await query(SERVER_URL, `CREATE DATABASE ${name}`);
  const db = databaseUrl(name);
  const originPort = await freePort();
  const edge = await startVarnish(originPort, 256);
  const origin = `http://127.0.0.1:${originPort}`;
  const server = startServer({
    DATABASE_URL: db,
    PORT: String(originPort),
    HOST: '127.0.0.1',
    REST_AUTH: 'optional',
    EDGE_MAX_AGE_S: '300',
    EDGE_PURGE: `varnish:${edge.url}/`,
    RATE_LIMIT_PER_SECOND: '1000000',
    LOG_LEVEL: 'warn',
    DUMPS_DIR: undefined,
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-bench-edge-'));
  try {
    await waitFor200(`${origin}/readyz`, 180_000);
    const { universe, paths } = await trace(origin);
    const script = path.join(dir, 'trace.lua');
    await fs.writeFile(
      script,
      `local paths = {${paths.map((p) => JSON.stringify(p)).join(',')}}\n` +
        'local i = 0\n' +
        'init = function(args) i = math.random(#paths) end\n' +
        'request = function()\n  i = i + 1\n  if i > #paths then i = 1 end\n  return wrk.format("GET", paths[i])\nend\n',
    );
    console.log(`trace: ${paths.length} requests over ${universe} URLs (Zipf s=${ZIPF_S}); load ${load()}`);
    // What the trace asks for answers (wrk counts a 404 as "non-2xx"; a 404 is public and cached like a 200).
    const statuses = new Map<number, number>();
    for (const url of new Set(paths)) {
      const status = (await fetch(`${origin}${url}`)).status;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    const census = [...statuses].map(([status, count]) => `${count} × ${status}`).join(', ');
    console.log(`the trace's distinct URLs answer: ${census}`);

    await wrk(origin, script, 3);
    const alone = await wrk(origin, script, DURATION_S);
    console.log(`origin alone: ${alone.rps.toFixed(0)} req/s (p99 ${alone.p99}, non-2xx ${alone.non2xx})`);

    const before = await varnishCounters(edge.workDir);
    const cold = await wrk(edge.url, script, DURATION_S);
    const after = await varnishCounters(edge.workDir);
    const hitRatio = (after.hits - before.hits) / Math.max(1, after.requests - before.requests);
    console.log(
      `through Varnish, from cold: ${cold.rps.toFixed(0)} req/s (p99 ${cold.p99}), hit ratio ${(hitRatio * 100).toFixed(1)} %`,
    );

    // One core each: the server side (the origin alone; then Varnish and the origin behind it, which sees only the
    // misses) pinned to core 1, wrk to core 0, so that the load generator does not take the server's CPU. And the CPU
    // the server side spent per request, which does not depend on how the cores are shared.
    const originPids = await processTree(server.pid!);
    const varnishPid = Number(await fs.readFile(path.join(path.dirname(edge.workDir), 'varnishd.pid'), 'utf8'));
    const edgePids = [...(await processTree(varnishPid)), ...originPids];
    await pin(originPids, '1');
    await wrk(origin, script, 2, '0');
    let cpu0 = await cpuMicros(originPids);
    const alonePinned = await wrk(origin, script, DURATION_S, '0');
    const aloneCpu = (await cpuMicros(originPids)) - cpu0;
    const aloneRequests = alonePinned.rps * DURATION_S;
    await pin(edgePids, '1');
    cpu0 = await cpuMicros(edgePids);
    const edgePinned = await wrk(edge.url, script, DURATION_S, '0');
    const edgeCpu = (await cpuMicros(edgePids)) - cpu0;
    const edgeRequests = edgePinned.rps * DURATION_S;
    await pin(edgePids, '0,1');
    const pinned = {
      alone: alonePinned.rps,
      edge: edgePinned.rps,
      aloneUs: aloneCpu / aloneRequests,
      edgeUs: edgeCpu / edgeRequests,
      non2xx: alonePinned.non2xx + edgePinned.non2xx,
    };
    console.log('one core for the server side, wrk on the other:', pinned);

    // Under writes: wrk through the edge while a chapter is renamed WRITES times; each write timed to fresh at the edge.
    const target = (
      await query<{ key: string }>(db, 'SELECT key FROM chapters WHERE is_active ORDER BY key LIMIT 1')
    )[0]!.key;
    const detail = `${edge.url}/api/v0/chapters/${encodeURIComponent(target)}`;
    const writesBefore = await varnishCounters(edge.workDir);
    const running = wrk(edge.url, script, Math.ceil((WRITES * WRITE_EVERY_MS) / 1000) + 2);
    const fresh: number[] = [];
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    for (let i = 0; i < WRITES; i++) {
      await (await fetch(detail)).text();
      const name_ = `Edge bench ${process.pid} ${i}`;
      await client.query('UPDATE chapters SET name = $1 WHERE key = $2', [name_, target]);
      const committed = performance.now();
      for (;;) {
        const body = await (await fetch(detail)).text();
        if (body.includes(name_)) break;
        if (performance.now() - committed > 30_000) throw new Error('never fresh');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      fresh.push(performance.now() - committed);
      await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
    }
    await client.end();
    const writing = await running;
    const writesAfter = await varnishCounters(edge.workDir);
    const writeRatio =
      (writesAfter.hits - writesBefore.hits) / Math.max(1, writesAfter.requests - writesBefore.requests);
    const metrics = await (await fetch(`${origin}/metrics`)).text();
    const loadAfter = load();
    const result = {
      universe,
      trace: paths.length,
      alone: alone.rps,
      aloneP99: alone.p99,
      edge: cold.rps,
      edgeP99: cold.p99,
      hitRatio,
      census,
      pinned,
      writing: writing.rps,
      writeRatio,
      freshP50: percentile(fresh, 50),
      freshP95: percentile(fresh, 95),
      freshMax: Math.max(...fresh),
      purgeP95: histogramP(metrics, 95),
      purgeP50: histogramP(metrics, 50),
      loadBefore,
      loadAfter,
    };
    console.log(result);
    await report(result);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await edge.destroy();
    await fs.rm(dir, { recursive: true, force: true });
    await query(SERVER_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  }
}

async function report(r: {
  universe: number;
  trace: number;
  alone: number;
  aloneP99: string;
  edge: number;
  edgeP99: string;
  hitRatio: number;
  census: string;
  pinned: { alone: number; edge: number; aloneUs: number; edgeUs: number; non2xx: number };
  writing: number;
  writeRatio: number;
  freshP50: number;
  freshP95: number;
  freshMax: number;
  purgeP95: string;
  purgeP50: string;
  loadBefore: string;
  loadAfter: string;
}) {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const text = `# The edge: the service behind the shipped Varnish (\`npm run bench:edge\`)

Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`bench/edge.ts\`: a real server (PostgreSQL, the
bundled data, \`REST_AUTH=optional\`, \`EDGE_MAX_AGE_S=300\`, \`EDGE_PURGE=varnish:…\`) behind Debian's Varnish 7.1
running \`deploy/varnish/default.vcl\`; wrk (${THREADS} threads, ${CONNECTIONS} connections, ${DURATION_S} s) replays an
anonymous trace of ${r.trace} requests, Zipf (s = ${ZIPF_S}) over ${r.universe} URLs (the details of chapters, projects,
committees and events and the 20-item pages of their lists). All on one machine of 2 cores, shared with other work:
load average ${r.loadBefore} before, ${r.loadAfter} after (1, 5, 15 minutes). wrk, Varnish and the server share the cores, so
the ratio understates what an edge on its own machines gives.

| | requests/s | p99 | goal |
|---|---|---|---|
| the origin alone (its response cache warm) | ${r.alone.toFixed(0)} | ${r.aloneP99} | |
| through Varnish, from cold | ${r.edge.toFixed(0)} | ${r.edgeP99} | ≥ 10× the origin: **${(r.edge / r.alone).toFixed(1)}×** |
| hit ratio through Varnish, from cold | ${pct(r.hitRatio)} | | ≥ 90 % |
| through Varnish while a chapter is renamed every ${WRITE_EVERY_MS} ms (${WRITES} writes) | ${r.writing.toFixed(0)} | | hit ratio ${pct(r.writeRatio)} |

One core for the server side, wrk on the other (\`taskset\`): the origin alone on core 1; then Varnish and the origin
behind it (which sees only the misses) together on core 1. And the CPU time the server side spent per request (its
processes' user and system time from \`/proc/PID/stat\`, every thread), which does not depend on how the cores are shared:

| one core for the server side | requests/s | server-side CPU per request | |
|---|---|---|---|
| the origin alone | ${r.pinned.alone.toFixed(0)} | ${r.pinned.aloneUs.toFixed(1)} µs | |
| Varnish, the origin behind it | ${r.pinned.edge.toFixed(0)} | ${r.pinned.edgeUs.toFixed(1)} µs | **${(r.pinned.edge / r.pinned.alone).toFixed(1)}×** the requests/s, **${(r.pinned.aloneUs / r.pinned.edgeUs).toFixed(1)}×** fewer CPU µs per request (goal ≥ 10×) |

The trace's distinct URLs answer ${r.census} (a 404 is public and cached like a 200; wrk counts it as "non-2xx").

Freshness (${WRITES} writes, each an \`UPDATE\` of a chapter's name committed by another client, the edge polled every 10 ms
until it answers the new name): commit to fresh at the edge p50 ${ms(r.freshP50)}, p95 ${ms(r.freshP95)}, max
${ms(r.freshMax)}. The server's own commit-to-purge histogram (\`cds_edge_purge_delay_seconds\`, from the change's time in
the log to the purge Varnish accepted): p50 ${r.purgeP50}, p95 ${r.purgeP95} (goal p95 ≤ 1 s).
`;
  await fs.writeFile(path.join(ROOT, 'bench', 'EDGE.md'), text);
}

await main();
