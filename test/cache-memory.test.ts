// No flood of distinct requests can take the process down through what it remembers (issue 41): the server as a
// process with a small heap and CACHE_MEMORY_MB, `group_by=company` on members of distinct companies with distinct
// filters (each answer once kept whole per filter set: 200,001 groups, 12.6 MB), then distinct MCP calls answering
// issues of large bodies (once 5,000 of them kept, each ~2 bytes a character). It survives, its heap after a full collection stays within the
// budget plus a baseline, and /metrics and /status/ report the budget. Scaled to run on both engines in seconds: before
// the fix, the 100 answers of ~1 MB (or the 300 of 320 kB) stayed in a heap of 160 MB, which died or stayed above.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, pgliteDir, type Database } from '../src/db/index.ts';
import { createTestDb, seedDataDir, type TestDatabase } from './helpers.ts';
import { childEnv, exited, freePort, ROOT, SERVER_ARGS, waitFor200 } from './process.ts';

const HEAP_MB = 160;
const CACHE_MEMORY_MB = 32;
const MEMBERS = 1_500;
/** Long names: each answer of 1,000 groups is ~630 kB, of all of them ~1 MB. */
const COMPANY = 'x'.repeat(600);
const GROUP_REQUESTS = 100;
const BODY = 320_000;
const MCP_CALLS = 300;
/** The heap of a started server beside what the caches may hold (measured: ~50 MB in all with 32 MB of caches). */
const BASELINE = 64 * 2 ** 20;

let server: ChildProcess;
let output = '';
let base = '';
let dataDir = '';
let database: TestDatabase | undefined;

/** Members of distinct companies, issues of large bodies: set-based, fast on both engines. */
async function seed(db: Database['db']): Promise<void> {
  await sql`INSERT INTO members (github_id, login, company, created_at, updated_at)
    SELECT 900000 + g, 'crowd' || g, 'Company ' || g || ${COMPANY}, now(), now() FROM generate_series(1, ${MEMBERS}::int) AS g`.execute(
    db,
  );
  await sql`INSERT INTO repositories (github_id, owner_login, name, created_at, updated_at)
    VALUES (990001, 'owasp', 'memory', now(), now())`.execute(db);
  await sql`INSERT INTO issues (github_id, repository_id, number, title, body, state, created_at, updated_at)
    SELECT 990000 + g, (SELECT id FROM repositories WHERE github_id = 990001), g, 'Issue ' || g,
           repeat(md5(g::text), ${BODY / 32}::int), 'open', now() - g * interval '1 minute', now() - g * interval '1 minute'
    FROM generate_series(1, ${MCP_CALLS}::int) AS g`.execute(db);
}

before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-cache-memory-'));
  if (process.env.DATABASE_URL) {
    database = await createTestDb();
    await seed(database.db);
  } else {
    await seedDataDir(dataDir);
    const embedded = await openDatabase({ dataDir: pgliteDir(dataDir) });
    try {
      await seed(embedded.db);
    } finally {
      await embedded.close();
    }
  }
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const args = [`--max-old-space-size=${HEAP_MB}`, '--expose-gc', '--import', path.join(ROOT, 'test/heap-probe.js')];
  server = spawn(process.execPath, [...args, ...SERVER_ARGS], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: childEnv({
      DATA_DIR: dataDir,
      DATABASE_URL: database?.url,
      PORT: String(port),
      AUTO_IMPORT: 'false',
      REST_AUTH: 'optional',
      RATE_LIMIT_PER_SECOND: '1000000',
      CACHE_MEMORY_MB: String(CACHE_MEMORY_MB),
      LOG_LEVEL: 'error',
    }),
  });
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor200(`${base}/status/`, 60_000);
});

after(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGKILL');
    await exited(server);
  }
  await database?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

/** The server's heap in use after a full collection (test/heap-probe.js). */
function heapUsed(): Promise<number> {
  return new Promise((resolve, reject) => {
    const answer = (message: unknown) => {
      server.off('exit', died);
      resolve((message as { heapUsed: number }).heapUsed);
    };
    const died = () => {
      server.off('message', answer);
      reject(new Error(`the server died\n${output.slice(-3000)}`));
    };
    server.once('message', answer);
    server.once('exit', died);
    server.send('heap');
  });
}

const MB = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
/** A distinct filter that every row passes. */
const since = (i: number) => new Date(Date.UTC(2000, 0, 1) + i * 1000).toISOString();

async function get(url: string): Promise<Response> {
  try {
    return await fetch(`${base}${url}`);
  } catch (error) {
    throw new Error(`no answer to ${url}: ${String(error)}\n${output.slice(-3000)}`);
  }
}

async function mcp(id: number, args: unknown): Promise<Response> {
  try {
    return await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get', arguments: args } }),
    });
  } catch (error) {
    throw new Error(`no answer to MCP call ${id}: ${String(error)}\n${output.slice(-3000)}`);
  }
}

test('distinct group_by and MCP floods leave the heap within the budget; the budget is reported', async (t) => {
  const budget = CACHE_MEMORY_MB * 2 ** 20;
  const started = performance.now();
  for (let i = 0; i < GROUP_REQUESTS; i++) {
    const res = await get(`/api/v0/members/?group_by=company&updated_after=${since(i)}`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { groups: { count: number }[]; other?: { groups: number; count: number } };
    if (i === 0) {
      // Beyond the cap: the largest 1,000 groups, the rest summed apart; everything adds up to `count`.
      const { groups, other, count } = body as typeof body & { count: number };
      assert.equal(groups.length, 1_000);
      assert.ok(other, 'the groups beyond 1,000 are summed in "other"');
      assert.equal(other.groups, MEMBERS - 1_000);
      assert.equal(groups.reduce((sum, g) => sum + g.count, 0) + other.count, count);
    }
  }
  const grouped = performance.now();
  for (let i = 0; i < MCP_CALLS; i++) {
    const res = await mcp(i, { resource: 'issues', id: `owasp/memory/${i + 1}`, fields: ['title', 'body'] });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(text.length > BODY, text.slice(0, 500));
  }
  const called = performance.now();
  const heap = await heapUsed();
  t.diagnostic(
    `${GROUP_REQUESTS} group_by requests in ${Math.round(grouped - started)} ms, ${MCP_CALLS} MCP calls in ` +
      `${Math.round(called - grouped)} ms; heap after a full collection ${MB(heap)} MB (budget ${MB(budget)} MB)`,
  );
  assert.ok(heap < budget + BASELINE, `heap ${MB(heap)} MB, over ${MB(budget + BASELINE)} MB`);

  const status = (await (await get('/status/')).json()) as {
    cache_memory: { used_bytes: number; budget_bytes: number };
  };
  assert.equal(status.cache_memory.budget_bytes, budget);
  assert.ok(status.cache_memory.used_bytes > 0, JSON.stringify(status));
  assert.ok(status.cache_memory.used_bytes <= budget, JSON.stringify(status));
  const metrics = await (await get('/metrics')).text();
  assert.match(metrics, new RegExp(`^cds_cache_memory_budget_bytes ${budget}$`, 'm'));
  for (const cache of ['responses', 'counts', 'mcp'])
    assert.match(metrics, new RegExp(`^cds_cache_memory_bytes\\{cache="${cache}"\\} [1-9]`, 'm'), cache);
});
