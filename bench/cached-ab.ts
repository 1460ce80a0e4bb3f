// Cached REST answers, before/after and against bare node:http (issue 46): CPU µs per request of each server, pinned
// (servers on core 0, wrk on core 1), in alternating rounds so that the machine's noise falls on every target alike.
//   node --import tsx bench/cached-ab.ts [BASE_DIR] [ROUNDS] [SECONDS]
// BASE_DIR: a checkout of the code to compare with (e.g. `git archive main | tar -x -C DIR`, node_modules linked);
// without it only this checkout is measured. PGlite, the bundled dataset plus 5,000 issues, LOG_LEVEL warn.
// CACHED_AB_ONLY=issues: only the endpoints whose name contains it. The MCP `get` (a POST /mcp of the chapter's
// `tools/call`) is measured in the same rounds as each service's REST detail of that chapter, and against a bare POST.
// CACHED_AB_FLOOR=1: the REST rows also hold bench/floor-server.ts at its three stages (the bare answer, sent by a
// process that holds the service's modules, its built app, its listening app).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, pgliteDir } from '../src/db/index.ts';
import { prepareBenchData } from './seed.ts';
import { cpuMicros } from './cpu.ts';
import { MCP_GET, MCP_HEADERS, waitForServer } from './load.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [baseDir, roundsArg, secondsArg] = process.argv.slice(2);
const ROUNDS = Number(roundsArg ?? 3);
const SECONDS = Number(secondsArg ?? 5);
const ONLY = process.env.CACHED_AB_ONLY;
const ALL = [
  { name: 'chapter detail', path: '/api/v0/chapters/london' },
  { name: 'chapters list', path: '/api/v0/chapters/?limit=100' },
  { name: 'issues list', path: '/api/v0/issues/?limit=100' },
  { name: 'MCP get', path: '/mcp', mcp: true },
];
const REST_DETAIL = '/api/v0/chapters/london';
/** CACHED_AB_ONLY: the endpoints whose name contains it. */
const ENDPOINTS = ONLY ? ALL.filter((e) => e.name.includes(ONLY)) : ALL;
/** CACHED_AB_FLOOR=1: also the floor of a REST answer inside the service's process, at each stage of its making. */
const FLOOR = process.env.CACHED_AB_FLOOR === '1';
const FLOOR_STAGES = ['import', 'built', 'listening'] as const;
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function start(cwd: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn('taskset', ['-c', '0', process.execPath, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** wrk's Lua script of the MCP POST, and its header fields. */
let mcpScript: string | undefined;
const mcpArgs = () => [
  '-s',
  mcpScript!,
  ...Object.entries(MCP_HEADERS).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
];

function wrk(url: string, key: string | undefined, seconds: number, post = false): number {
  const out = spawnSync(
    'taskset',
    [
      '-c',
      '1',
      'wrk',
      '-t1',
      '-c50',
      `-d${seconds}s`,
      ...(key ? ['-H', `x-api-key: ${key}`] : []),
      ...(post ? mcpArgs() : []),
      url,
    ],
    { encoding: 'utf8' },
  ).stdout;
  if (/Non-2xx/.test(out)) throw new Error(`${url}: non-2xx\n${out}`);
  return Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
}

/** CPU µs per request of `pid` (the node process: taskset execs it), all of it and user space's. */
async function measure(url: string, pid: number, key?: string, post = false): Promise<[number, number]> {
  wrk(url, key, 1, post);
  const before = await cpuMicros([pid]);
  const userBefore = await userMicros(pid);
  const requests = Math.max(1, wrk(url, key, SECONDS, post));
  const after = await cpuMicros([pid]);
  const userAfter = await userMicros(pid);
  return [(after - before) / requests, (userAfter - userBefore) / requests];
}

const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The user-space CPU time of a process, in µs (utime, /proc/PID/stat's 14th field). */
async function userMicros(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  return (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[11]) * 1_000_000) / TICKS;
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-ab-'));
  mcpScript = path.join(dataDir, 'mcp.lua');
  await fs.writeFile(mcpScript, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(MCP_GET.body)}\n`);
  const children: ChildProcess[] = [];
  try {
    const lite = await openDatabase({ dataDir: pgliteDir(dataDir) });
    await prepareBenchData(lite.db, 5_000);
    await lite.db
      .insertInto('users')
      .values({ login: 'bench' })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await lite.close();
    const made = spawnSync(
      process.execPath,
      ['bin/cds.js', 'keys', 'create', '--user', 'bench', '--name', 'bench', '--expires-in', '1'],
      { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir }, encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(made.stderr);
    const key = made.stdout.trim();
    const services: { label: string; dir: string }[] = [{ label: 'this', dir: ROOT }];
    if (baseDir) services.unshift({ label: 'base', dir: path.resolve(baseDir) });
    const targets: { label: string; port: number; pid: number; bare?: string }[] = [];
    let port = 19_100;
    for (const service of services) {
      // Each its own copy of the database: PGlite is one process's.
      const dir = `${dataDir}-${service.label}`;
      await fs.cp(dataDir, dir, { recursive: true });
      const child = start(service.dir, ['--import', 'tsx', 'src/server.ts'], {
        DATA_DIR: dir,
        PORT: String(++port),
        RATE_LIMIT_PER_SECOND: '1000000',
        REST_AUTH: 'required',
        RESPONSE_CACHE: 'true',
        LOG_LEVEL: 'warn',
      });
      children.push(child);
      targets.push({ label: service.label, port, pid: child.pid! });
      await waitForServer(`http://127.0.0.1:${port}/status/`);
    }
    const rows = new Map<string, number[]>();
    const users = new Map<string, number[]>();
    for (const endpoint of ENDPOINTS) {
      // The cached answer's body and header fields, from the last service: the bare servers send the same.
      const last = targets.at(-1)!;
      const url = `http://127.0.0.1:${last.port}${endpoint.path}`;
      const post = endpoint.mcp === true;
      const ask = (to: string) =>
        fetch(
          to,
          post
            ? { method: 'POST', headers: { ...MCP_HEADERS, 'x-api-key': key }, body: MCP_GET.body }
            : { headers: { 'x-api-key': key } },
        );
      for (const t of targets) await ask(`http://127.0.0.1:${t.port}${endpoint.path}`);
      const res = await ask(url);
      if (!post && res.headers.get('x-cache') !== 'HIT') throw new Error(`${url}: not a hit`);
      if (!res.ok) throw new Error(`${url}: ${res.status}`);
      const headers = [...res.headers].filter(([name]) => !NODE_OWN.has(name));
      const file = path.join(dataDir, `${endpoint.name.replace(/ /g, '-')}.body`);
      await fs.writeFile(file, Buffer.from(await res.arrayBuffer()));
      await fs.writeFile(`${file}.json`, JSON.stringify(headers));
      const bare: typeof targets = [];
      for (const same of [false, true]) {
        const child = start(
          ROOT,
          ['bench/bare-server.js', String(++port), file, ...(same ? [`${file}.json`] : [])],
          {},
        );
        children.push(child);
        await waitForServer(`http://127.0.0.1:${port}/`);
        bare.push({
          label: same ? 'bare, same headers' : 'bare, 2 fields',
          port,
          pid: child.pid!,
          bare: endpoint.name,
        });
      }
      // CACHED_AB_FLOOR=1: the same constant answer from a process holding the service (bench/floor-server.ts).
      if (FLOOR && !post)
        for (const stage of FLOOR_STAGES) {
          // A database of its own for a stage that opens one (PGlite is one process's); `import` opens none.
          const dir = `${dataDir}-floor-${stage}`;
          if (stage !== 'import') {
            await fs.rm(dir, { recursive: true, force: true });
            await fs.cp(dataDir, dir, { recursive: true });
          }
          const child = start(
            ROOT,
            ['--import', 'tsx', 'bench/floor-server.ts', stage, String(++port), file, `${file}.json`],
            { DATA_DIR: dir, PORT: String(port + 500), LOG_LEVEL: 'warn' },
          );
          children.push(child);
          await waitForServer(`http://127.0.0.1:${port}/`);
          bare.push({ label: `floor, ${stage}`, port, pid: child.pid!, bare: endpoint.name });
        }
      console.error(`${endpoint.name}: ${headers.length} fields, ${(await fs.stat(file)).size} bytes`);
      // The MCP call's rounds hold each service's REST detail too: the ratio of issue 46 is taken in the same rounds.
      const details = post ? targets.map((t) => ({ ...t, label: `${t.label}, REST detail`, detail: true })) : [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of [...targets, ...details, ...bare]) {
          const detail = 'detail' in t;
          const [micros, user] = await measure(
            `http://127.0.0.1:${t.port}${t.bare ? '/' : detail ? REST_DETAIL : endpoint.path}`,
            t.pid,
            t.bare ? undefined : key,
            post && !detail,
          );
          const row = `${endpoint.name} | ${t.label}`;
          rows.set(row, [...(rows.get(row) ?? []), micros]);
          users.set(row, [...(users.get(row) ?? []), user]);
        }
      }
      for (const child of children.splice(targets.length)) child.kill('SIGTERM');
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const endpoint of ENDPOINTS) {
      const of = (label: string) => median(rows.get(`${endpoint.name} | ${label}`)!);
      const two = of('bare, 2 fields');
      const same = of('bare, same headers');
      const us = (label: string) => median(users.get(`${endpoint.name} | ${label}`)!);
      console.log(
        `${endpoint.name} | user-space µs per request (medians): ${[
          ...targets.map((t) => t.label),
          'bare, same headers',
          'bare, 2 fields',
        ]
          .map((label) => `${label} ${us(label).toFixed(1)}`)
          .join(', ')}`,
      );
      if (endpoint.mcp)
        for (const t of targets) {
          const detailRounds = rows.get(`${endpoint.name} | ${t.label}, REST detail`)!;
          const ratios = rows.get(`${endpoint.name} | ${t.label}`)!.map((x, i) => x / detailRounds[i]!);
          console.log(
            `${endpoint.name} | ${t.label}: REST detail in the same rounds ${median(detailRounds).toFixed(1)} µs; ` +
              `MCP/REST CPU per request, median of the rounds ${median(ratios).toFixed(2)}× (${ratios.map((x) => x.toFixed(2)).join(', ')})`,
          );
        }
      const floors = FLOOR && !endpoint.mcp ? FLOOR_STAGES.map((stage) => `floor, ${stage}`) : [];
      for (const label of floors)
        console.log(
          `${endpoint.name} | ${label}: ${of(label).toFixed(1)} µs (user ${us(label).toFixed(1)}) | bare same ` +
            `${same.toFixed(1)} → ${(same / of(label)).toFixed(2)}`,
        );
      for (const t of targets) {
        const own = of(t.label);
        console.log(
          `${endpoint.name} | ${t.label}: ${own.toFixed(1)} µs (rounds ${rows
            .get(`${endpoint.name} | ${t.label}`)!
            .map((x) => x.toFixed(1))
            .join(
              ', ',
            )}) | bare same ${same.toFixed(1)} → ${(same / own).toFixed(2)} | bare 2 fields ${two.toFixed(1)} → ${(two / own).toFixed(2)}`,
        );
      }
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await fs.rm(dataDir, { recursive: true, force: true });
    for (const label of ['base', 'this', ...FLOOR_STAGES.map((stage) => `floor-${stage}`)])
      await fs.rm(`${dataDir}-${label}`, { recursive: true, force: true });
  }
}

await main();
