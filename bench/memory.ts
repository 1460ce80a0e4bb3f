// npm run bench:memory: issue 41's Done-when at full size. A server process with --max-old-space-size=512 and the
// default CACHE_MEMORY_MB (a quarter of its heap) on MEMBERS members of distinct companies and MCP_CALLS issues of
// 100–170 kB bodies (test/memory-flood.ts, set-based), sent GROUP_REQUESTS `group_by=company` requests with distinct
// `updated_after`/`updated_before` windows of WINDOW members each (each > 1,000 groups: 1,000 answered, the rest in
// `other`), then MCP_CALLS MCP `get` calls of distinct issues. Every answer must be 200 and the process alive at the
// end; reported: its heap after a full collection (started, after the group_by, after the MCP calls), the budget, each
// cache's bytes (cds_cache_memory_bytes), requests/s. Test/cache-memory.test.ts is the same flood scaled to seconds.
// Results: bench/MEMORY.md.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:memory   # a fresh database there, dropped after
//   npm run bench:memory                                                        # an embedded database (PGlite)
//   SERVER_ROOT=/tmp/before DATABASE_URL=… npm run bench:memory                 # another checkout's server (before a fix)
//   MEMBERS=50000 GROUP_REQUESTS=200 MCP_CALLS=2000 npm run bench:memory         # smaller
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers/promises';
import { serverUrl } from '../test/helpers.ts';
import { exited, ROOT } from '../test/process.ts';
import { floodDatabase, mcpGet, MEMBERS_FROM, startFloodServer, type FloodServer } from '../test/memory-flood.ts';

const HEAP_MB = Number(process.env.HEAP_MB ?? 512);
const MEMBERS = Number(process.env.MEMBERS ?? 200_000);
/** Members in each request's window: the database counts that many, the answer keeps 1,000 groups. */
const WINDOW = Number(process.env.WINDOW ?? 10_000);
const GROUP_REQUESTS = Number(process.env.GROUP_REQUESTS ?? 1_000);
const MCP_CALLS = Number(process.env.MCP_CALLS ?? 10_000);
const BODY = [100_000, 170_000] as const;
/** Requests in flight at once: a few clients, as a crawler sends them (the machine is shared). */
const CLIENTS = Number(process.env.CLIENTS ?? 4);
const SERVER_ROOT = process.env.SERVER_ROOT;
/** Company names of ~45 characters: 1,000 groups are ~60 kB of JSON, a window's groups before the cap ~0.6 MB. */
const COMPANY = ' of the OWASP benchmark crowd';

const MB = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const iso = (second: number) => new Date(MEMBERS_FROM + second * 1000).toISOString();

/** Where a flood stopped: the request that failed and why. */
class Stopped extends Error {}

/** `count` requests, CLIENTS at a time; each `send(i)` throws if its answer is wrong. Returns requests/s. */
async function flood(label: string, count: number, send: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  let done = 0;
  const client = async () => {
    while (next < count) {
      const i = next++;
      await send(i);
      if (++done % Math.max(1, Math.floor(count / 10)) === 0)
        console.error(`  ${label}: ${done}/${count}, ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return count / ((performance.now() - started) / 1000);
}

async function answer(server: FloodServer, what: string, request: () => Promise<Response>): Promise<string> {
  let res: Response;
  try {
    res = await request();
  } catch (error) {
    throw new Stopped(`${what}: no answer (${String((error as Error).cause ?? error)})`);
  }
  const text = await res.text().catch((error: unknown) => {
    throw new Stopped(`${what}: answer cut (${String(error)})`);
  });
  if (res.status !== 200) throw new Stopped(`${what}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

/** cds_cache_memory_bytes per cache, and the budget, from /metrics (absent before issue 41's fix). */
async function cacheBytes(server: FloodServer): Promise<string> {
  const metrics = await (await fetch(`${server.base}/metrics`)).text();
  const caches = [...metrics.matchAll(/^cds_cache_memory_bytes\{cache="(\w+)"\} (\d+)/gm)].map(
    ([, cache, bytes]) => `${cache} ${MB(Number(bytes))}`,
  );
  return caches.length > 0 ? caches.join(', ') : '(no cds_cache_memory_bytes)';
}

async function main(): Promise<number> {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: SERVER_ROOT ?? ROOT, encoding: 'utf8' });
  console.log(
    `# bench:memory, server at ${commit.stdout.trim()}${SERVER_ROOT ? ` (${SERVER_ROOT})` : ''}, ${new Date().toISOString()}`,
  );
  console.log(`# ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), Node ${process.version}, load average ${load()}`);
  console.log(
    `# ${serverUrl ? 'PostgreSQL' : 'PGlite'}: ${MEMBERS} members of distinct companies, ${MCP_CALLS} issues of ${BODY[0] / 1000}–${BODY[1] / 1000} kB; ` +
      `server --max-old-space-size=${HEAP_MB}, CACHE_MEMORY_MB ${process.env.CACHE_MEMORY_MB ?? 'default'}, ${CLIENTS} clients\n`,
  );
  const seeding = performance.now();
  const database = await floodDatabase({ members: MEMBERS, company: COMPANY, issues: MCP_CALLS, body: BODY });
  console.log(`seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`);
  let server: FloodServer | undefined;
  const rows: string[] = [];
  const row = (phase: string, requests: string, heap: string, caches: string) =>
    rows.push(`| ${phase} | ${requests} | ${heap} | ${caches} |`);
  let failure: string | undefined;
  const started = performance.now();
  try {
    server = await startFloodServer({
      database,
      heapMb: HEAP_MB,
      cacheMemoryMb: process.env.CACHE_MEMORY_MB ? Number(process.env.CACHE_MEMORY_MB) : undefined,
      root: SERVER_ROOT,
    });
    const s = server;
    const budget = /^cds_cache_memory_budget_bytes (\d+)$/m.exec(await (await fetch(`${s.base}/metrics`)).text());
    console.log(`budget (cds_cache_memory_budget_bytes): ${budget ? `${MB(Number(budget[1]))} MB` : 'none'}\n`);
    row('started', '', MB(await s.heapUsed()), await cacheBytes(s));

    // Windows of WINDOW members, each starting `step` seconds after the last: all distinct, each > 1,000 companies.
    const step = Math.max(1, Math.floor((MEMBERS - WINDOW) / GROUP_REQUESTS));
    const grouped = await flood('group_by', GROUP_REQUESTS, async (i) => {
      const url = `/api/v0/members/?group_by=company&updated_after=${iso(i * step)}&updated_before=${iso(i * step + WINDOW)}`;
      const body = JSON.parse(await answer(s, `group_by request ${i + 1}`, () => fetch(`${s.base}${url}`))) as {
        groups: unknown[];
      };
      if (body.groups.length < 1_000) throw new Stopped(`group_by request ${i + 1}: ${body.groups.length} groups`);
    });
    row(`${GROUP_REQUESTS} group_by`, grouped.toFixed(1), MB(await s.heapUsed()), await cacheBytes(s));

    const called = await flood('MCP', MCP_CALLS, async (i) => {
      const args = { resource: 'issues', id: `owasp/memory/${i + 1}`, fields: ['title', 'body'] };
      const text = await answer(s, `MCP call ${i + 1}`, () => mcpGet(s.base, i, args));
      if (text.length < BODY[0] || text.includes('"isError":true'))
        throw new Stopped(`MCP call ${i + 1}: ${text.slice(0, 300)}`);
    });
    row(`${MCP_CALLS} MCP get`, called.toFixed(1), MB(await s.heapUsed()), await cacheBytes(s));
    const alive = await fetch(`${s.base}/livez`).then((res) => res.status);
    if (alive !== 200) throw new Stopped(`/livez ${alive} at the end`);
  } catch (error) {
    if (!(error instanceof Stopped) && !String(error).includes('the server died')) throw error;
    failure = (error as Error).message.split('\n')[0];
  } finally {
    const elapsed = (performance.now() - started) / 1000;
    // A server that closed the connection is dying: its exit (and V8's "JavaScript heap out of memory") follows.
    if (failure && server) await Promise.race([exited(server.process), setTimeout(10_000)]);
    const died = server && (server.process.exitCode !== null || server.process.signalCode !== null);
    console.log('| phase | requests/s | heap after a full GC, MB | cds_cache_memory_bytes, MB |');
    console.log('|---|---:|---:|---|');
    for (const line of rows) console.log(line);
    console.log(`\nelapsed ${elapsed.toFixed(1)} s (the flood), load average after ${load()}`);
    if (failure) console.log(`\nSTOPPED: ${failure}`);
    if (died) {
      const { exitCode, signalCode } = server!.process;
      const oom = /[^\n]*heap out of memory[^\n]*/.exec(server!.output());
      console.log(`server died (exit ${exitCode ?? signalCode}): ${oom?.[0].trim() ?? server!.output().slice(-500)}`);
    } else if (failure && server) {
      // Alive but failing (a 503): what it logged at error level says why.
      for (const line of server
        .output()
        .split('\n')
        .filter((l) => l.includes('"level":50'))
        .slice(-3))
        console.log(`server: ${line.slice(0, 300)}`);
    } else if (!failure) console.log('\nevery answer 200, the process alive at the end');
    await server?.stop();
    await database.drop();
  }
  return failure ? 1 : 0;
}

process.exitCode = await main();
