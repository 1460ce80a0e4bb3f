// Test tier: system (starts a PostgreSQL, a Redis and the server of its own): `npm run test:system`, CI.
// The service as a process under load while its PostgreSQL and Redis go away and come back (issue 13,
// F1). It brings its own servers (test/postgres-server.ts, test/redis-server.ts), so it runs the same
// way in both CI passes, whatever DATABASE_URL says; the machine's shared servers are never touched.
// Asserts: the process never dies, every answer is 200 or 503 (never a dropped connection), and 200
// comes back within 2 s of each restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exited, freePort, startServer, waitFor200 } from './process.ts';
import { startPrivatePostgres, type PrivatePostgres } from './postgres-server.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';

const CYCLES = 12;
const WORKERS = 8;
/** Bounds of the load: it stops at whichever comes first. */
const MAX_REQUESTS = 60_000;
const MAX_LOAD_MS = 60_000;
const RECOVERY_LIMIT_MS = 2_000;

let pg: PrivatePostgres;
let redis: PrivateRedis;
let server: ReturnType<typeof startServer>;
let base = '';
let dataDir = '';

before(async () => {
  pg = await startPrivatePostgres();
  redis = await startPrivateRedis();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-faults-'));
  const port = await freePort();
  server = startServer({
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    DATA_DIR: dataDir,
    PORT: String(port),
    AUTO_IMPORT: 'false',
    REST_AUTH: 'optional',
    RESPONSE_CACHE: 'false',
    RATE_LIMIT_PER_SECOND: '1000000',
    LOG_LEVEL: 'fatal',
  });
  base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/status/`, 60_000);
});

after(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGKILL');
    await exited(server);
  }
  await redis?.stop();
  await pg?.destroy();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

interface Outcome {
  startedAt: number;
  status: number | 'dropped';
  detail?: string;
}

function request(agent: http.Agent, url: string): Promise<Outcome> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ startedAt, status: res.statusCode ?? 0 }));
      res.on('error', (error) => resolve({ startedAt, status: 'dropped', detail: error.message }));
    });
    req.on('error', (error) => resolve({ startedAt, status: 'dropped', detail: error.message }));
  });
}

test(
  `${CYCLES} cycles of PostgreSQL (fast and immediate) and Redis stopping under load: no crash, only 200 or 503, back within 2 s`,
  { timeout: 120_000 },
  async (t) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS });
    const outcomes: Outcome[] = [];
    let stop = false;
    const loadStarted = performance.now();
    const urls = [`${base}/api/v0/chapters/?limit=5`, `${base}/status/`, `${base}/api/v0/issues/?limit=1`];
    const workers = Array.from({ length: WORKERS }, async (_, worker) => {
      for (let i = 0; !stop && outcomes.length < MAX_REQUESTS && performance.now() - loadStarted < MAX_LOAD_MS; i++) {
        outcomes.push(await request(agent, urls[(worker + i) % urls.length]!));
      }
    });
    /** Resolves with the time of the first answer with this status to a request sent after `since`. */
    const seen = async (status: number, since: number, timeoutMs: number): Promise<number> => {
      const deadline = performance.now() + timeoutMs;
      let from = 0;
      while (performance.now() < deadline) {
        for (; from < outcomes.length; from++) {
          const o = outcomes[from]!;
          if (o.status === status && o.startedAt >= since) return o.startedAt;
        }
        await new Promise((r) => setImmediate(r));
      }
      throw new Error(`no ${status} to a request sent within ${timeoutMs} ms\n${server.output().slice(-2000)}`);
    };

    const recoveries: number[] = [];
    try {
      await seen(200, loadStarted, 5_000);
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const mode = cycle % 2 === 0 ? 'fast' : 'immediate';
        const withRedis = cycle % 3 === 1;
        if (withRedis) await redis.stop();
        const stoppedAt = performance.now();
        await pg.stop(mode);
        await seen(503, stoppedAt, 5_000);
        assert.equal(
          server.exitCode,
          null,
          `cycle ${cycle}: the process died after pg_ctl stop -m ${mode}\n${server.output()}`,
        );
        await pg.start();
        const restartedAt = performance.now();
        if (withRedis) await redis.start();
        recoveries.push((await seen(200, restartedAt, 10_000)) - restartedAt);
        assert.equal(server.exitCode, null, `cycle ${cycle}: the process died\n${server.output()}`);
      }
    } finally {
      stop = true;
      await Promise.all(workers);
      agent.destroy();
    }

    const dropped = outcomes.filter((o) => o.status === 'dropped');
    assert.deepEqual(dropped.slice(0, 5), [], `${dropped.length} of ${outcomes.length} connections dropped`);
    const statuses = new Set(outcomes.map((o) => o.status));
    assert.deepEqual(
      [...statuses].filter((s) => s !== 200 && s !== 503),
      [],
      'only 200 and 503',
    );
    assert.equal(recoveries.length, CYCLES);
    const slowest = Math.max(...recoveries);
    assert.ok(
      slowest <= RECOVERY_LIMIT_MS,
      `200 came back ${Math.round(slowest)} ms after a restart (limit ${RECOVERY_LIMIT_MS})`,
    );
    t.diagnostic(
      `${outcomes.length} requests, ${outcomes.filter((o) => o.status === 503).length} answered 503; ` +
        `back to 200 after a restart in ${recoveries.map((ms) => Math.round(ms)).join(', ')} ms`,
    );

    // Still alive and still stops gracefully.
    assert.equal((await fetch(`${base}/status/`)).status, 200);
    server.kill('SIGTERM');
    assert.equal(await exited(server), 0, server.output());
  },
);
