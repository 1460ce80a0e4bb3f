// Test tier: system (floods the service to prove a memory bound): `npm run test:system`, CI.
// No flood of distinct requests can take the process down through what it remembers (issue 41): the server as a
// process with a small heap and CACHE_MEMORY_MB, `group_by=company` on members of distinct companies with distinct
// filters (each answer once kept whole per filter set: 200,001 groups, 12.6 MB), then distinct MCP calls answering
// issues of large bodies (once 5,000 of them kept, each ~2 bytes a character). It survives, its heap after a full
// collection stays within the budget plus a baseline, and /metrics and /status/ report the budget. Scaled to run on
// both engines in seconds (bench/memory.ts is the full size): few requests of answers as large as a cache's share
// keeps (a quarter of it), and few issues asked for in many distinct ways (the order of `fields`), since seeding large
// bodies costs more than reading them. Before the fix (744128d), the 60 answers of ~1 MB left 90 MB after a full
// collection, and the 144 MCP calls of 360 kB took the 128 MB heap down (heap out of memory).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { floodDatabase, mcpGet, startFloodServer, type FloodDatabase, type FloodServer } from './memory-flood.ts';

const HEAP_MB = 128;
const CACHE_MEMORY_MB = 32;
const MEMBERS = 1_500;
/** Long names: each answer of 1,000 groups is ~630 kB, of all of them ~1 MB. */
const COMPANY = 'x'.repeat(600);
const GROUP_REQUESTS = 60;
const BODY = 360_000;
const ISSUES = 6;
/** Each issue asked for with `fields` in each of their 24 orders: 144 distinct calls. */
const ORDERS = permutations(['title', 'body', 'state', 'url']);
const MCP_CALLS = ISSUES * ORDERS.length;
/** The heap of a started server beside what the caches may hold (measured: ~42 MB in all with 32 MB of caches). */
const BASELINE = 48 * 2 ** 20;

let server: FloodServer;
let database: FloodDatabase | undefined;

before(async () => {
  database = await floodDatabase({ members: MEMBERS, company: COMPANY, issues: ISSUES, body: [BODY, BODY] });
  server = await startFloodServer({ database, heapMb: HEAP_MB, cacheMemoryMb: CACHE_MEMORY_MB });
});

after(async () => {
  await server?.stop();
  await database?.drop();
});

function permutations(items: string[]): string[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) => permutations(items.filter((_, j) => j !== i)).map((rest) => [item, ...rest]));
}

const MB = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
/** A distinct filter that every row passes. */
const since = (i: number) => new Date(Date.UTC(2000, 0, 1) + i * 1000).toISOString();

async function get(url: string): Promise<Response> {
  try {
    return await fetch(`${server.base}${url}`);
  } catch (error) {
    throw new Error(`no answer to ${url}: ${String(error)}\n${server.output().slice(-3000)}`);
  }
}

async function mcp(id: number, args: unknown): Promise<Response> {
  try {
    return await mcpGet(server.base, id, args);
  } catch (error) {
    throw new Error(`no answer to MCP call ${id}: ${String(error)}\n${server.output().slice(-3000)}`);
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
    const issue = (i % ISSUES) + 1;
    const res = await mcp(i, {
      resource: 'issues',
      id: `owasp/memory/${issue}`,
      fields: ORDERS[Math.floor(i / ISSUES)],
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${text.slice(0, 300)}\n${server.output().slice(-3000)}`);
    assert.ok(text.length > BODY, text.slice(0, 500));
  }
  const called = performance.now();
  const heap = await server.heapUsed();
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
