// The stream of changes (issue 43, docs/changes.md "The stream"), on PostgreSQL: commit-to-stream latency (changes
// committed one by one, each timed from its commit's return to its arrival at a client of the stream) and 1,000 open
// streams on one instance (the heap and RSS they cost, and the time from one commit until all of them have it).
// Figures in bench/CHANGES-STREAM.md. `npm run bench:changes` calls benchChangesStream; alone:
//   npx tsx bench/changes-stream.ts     (a scratch database on DATABASE_URL's server, else 127.0.0.1:5432; dropped after)
import net from 'node:net';
import { sql } from 'kysely';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { importDataset } from '../src/data/import/dataset.import.ts';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { newKeyOver } from '../test/auth.ts';

export interface StreamFigures {
  latency: { changes: number; p50Ms: number; p95Ms: number; maxMs: number };
  fanOut: {
    streams: number;
    heapPerStreamKb: number;
    rssPerStreamKb: number;
    firstMs: number;
    allMs: number;
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw client of the stream: calls `seen` with each change id it reads. */
function openStream(port: number, key: string, seen: (id: number) => void): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let head = true;
    let rest = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.write(`GET /api/v0/changes/stream HTTP/1.1\r\nHost: bench\r\nX-API-Key: ${key}\r\n\r\n`);
    socket.on('data', (chunk: string) => {
      if (head) {
        if (!chunk.startsWith('HTTP/1.1 200')) return reject(new Error(chunk.split('\r\n')[0]));
        head = false;
        resolve(socket);
      }
      rest += chunk;
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (line.startsWith('id: ')) seen(Number(line.slice(4)));
    });
  });
}

export async function benchChangesStream({
  serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  changes = 100,
  streams = 1_000,
}: { serverUrl?: string; changes?: number; streams?: number } = {}): Promise<StreamFigures> {
  const name = `cds_stream_bench_${process.pid}`;
  const adminUrl = new URL(serverUrl);
  adminUrl.pathname = '/postgres';
  const admin = await openDatabase({ databaseUrl: adminUrl.toString(), poolSize: 1 });
  await sql.raw(`CREATE DATABASE ${name}`).execute(admin.db);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 5 });
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    LOG_LEVEL: 'silent',
    AUTH_DEV_LOGIN: 'true',
    RATE_LIMIT_PER_SECOND: '1000000',
    CHANGES_STREAMS_PER_KEY: String(streams),
  });
  const sockets: net.Socket[] = [];
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    await migrateToLatest(database.db);
    await importDataset(database.db);
    app = await buildApp({ config, database });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(base).port);
    const key = (await newKeyOver(base, 'bench', 'bench')).raw;
    const { rows } = await sql<{ key: string }>`
      SELECT key FROM chapters WHERE is_active AND latitude IS NOT NULL ORDER BY key LIMIT 50`.execute(database.db);
    let round = 0;
    /** One chapter renamed in its own transaction: one change; resolves with its id and when its commit returned. */
    const commitOne = async () => {
      round++;
      const chapter = rows[round % rows.length]!.key;
      const id = await database.db.transaction().execute(async (trx) => {
        await sql`UPDATE chapters SET name = ${`Bench ${round}`} WHERE key = ${chapter}`.execute(trx);
        const last = await sql<{ id: string }>`SELECT max(id) AS id FROM changes`.execute(trx);
        return Number(last.rows[0]!.id);
      });
      return { id, committed: performance.now() };
    };

    // Commit to stream: one client, changes committed 100-300 ms apart (at random points of the poll).
    const arrivals = new Map<number, number>();
    const waiters = new Map<number, () => void>();
    sockets.push(
      await openStream(port, key, (id) => {
        arrivals.set(id, performance.now());
        waiters.get(id)?.();
      }),
    );
    const latencies: number[] = [];
    for (let i = 0; i < changes; i++) {
      const { id, committed } = await commitOne();
      if (!arrivals.has(id)) await new Promise<void>((resolve) => waiters.set(id, resolve));
      latencies.push(arrivals.get(id)! - committed);
      await pause(100 + Math.random() * 200);
    }
    sockets.pop()!.destroy();

    // 1,000 streams: what they cost, and one change to all of them.
    await pause(500);
    global.gc?.();
    const before = process.memoryUsage();
    const received = new Map<number, number[]>();
    for (let i = 0; i < streams; i++)
      sockets.push(
        await openStream(port, key, (id) =>
          (received.get(id) ?? received.set(id, []).get(id)!).push(performance.now()),
        ),
      );
    await pause(500);
    global.gc?.();
    const after = process.memoryUsage();
    const { id, committed } = await commitOne();
    while ((received.get(id)?.length ?? 0) < streams) await pause(5);
    const times = received.get(id)!;
    return {
      latency: {
        changes,
        p50Ms: percentile(latencies, 50),
        p95Ms: percentile(latencies, 95),
        maxMs: Math.max(...latencies),
      },
      fanOut: {
        streams,
        heapPerStreamKb: (after.heapUsed - before.heapUsed) / streams / 1024,
        rssPerStreamKb: (after.rss - before.rss) / streams / 1024,
        firstMs: Math.min(...times) - committed,
        allMs: Math.max(...times) - committed,
      },
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    await app?.close();
    await database.close();
    await sql.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).execute(admin.db);
    await admin.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await benchChangesStream();
  const { latency, fanOut } = figures;
  console.log(
    [
      `commit to stream, ${latency.changes} changes: p50 ${latency.p50Ms.toFixed(0)} ms, p95 ${latency.p95Ms.toFixed(0)} ms, max ${latency.maxMs.toFixed(0)} ms`,
      `${fanOut.streams} open streams: heap ${fanOut.heapPerStreamKb.toFixed(1)} kB and RSS ${fanOut.rssPerStreamKb.toFixed(1)} kB per stream (server and client sockets in one process)`,
      `one change to all ${fanOut.streams}: first after ${fanOut.firstMs.toFixed(0)} ms, all after ${fanOut.allMs.toFixed(0)} ms`,
    ].join('\n'),
  );
  process.exit(0);
}
