// Commit-to-webhook latency (issue 43, part of `npm run bench:changes`): changes committed one at a time, each
// delivered to several webhooks on a receiver on 127.0.0.1, by the delivery worker as server.ts starts it (woken by the
// data version watcher, its own poll of a second). Measured: for every delivery, the time from the writer's commit to
// the receiver's reading of the request (p50, p95, max; goal p95 ≤ 2 s), and a burst of changes committed at once
// (the time until every webhook has every one). Both engines: the embedded database, and the PostgreSQL server of
// BENCH_DATABASE_URL (or DATABASE_URL) in a database of its own. Alone: `npx tsx bench/changes-webhooks.ts`.
// Results: bench/CHANGES-WEBHOOKS.md.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase, type Database, type Db } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { insertLocalUser } from '../src/auth/users.queries.ts';
import { DataVersionWatcher } from '../src/announcements/data-version.ts';
import { createWebhook } from '../src/webhooks/webhooks.service.ts';
import { startWebhookDeliveries } from '../src/webhooks/webhook-delivery.ts';
import type { WebhookSettings } from '../src/config.ts';

export interface WebhookBenchResult {
  engine: 'pglite' | 'postgres';
  webhooks: number;
  spaced: { changes: number; deliveries: number; p50Ms: number; p95Ms: number; maxMs: number };
  burst: { changes: number; deliveries: number; allDeliveredMs: number; perSecond: number };
}

const SETTINGS: WebhookSettings = {
  perUser: 100,
  retryMinMs: 5_000,
  retryMaxHours: 72,
  allowPrivate: true,
  secretsKey: 'bench-webhook-secrets-key-0123456789abcdef',
};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sequence = 0;
/** One chapter inserted in a transaction of its own (the change log's trigger writes its change); its key. */
async function writeChapter(db: Db): Promise<string> {
  const key = `bench-hook-${process.pid}-${++sequence}`;
  await db
    .insertInto('chapters')
    .values({
      key,
      name: `Bench chapter ${sequence}`,
      is_active: true,
      latitude: 10,
      longitude: 20,
      related_urls: '[]',
      contribution_data: '{}',
      contribution_stats: '{}',
      country_code: '',
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  return key;
}

/** Measures one engine's database (migrated, empty). */
async function measure(
  engine: WebhookBenchResult['engine'],
  database: Database,
  options: { webhooks: number; spaced: number; burst: number },
): Promise<WebhookBenchResult> {
  const db = database.db;
  await migrateToLatest(db);
  const committed = new Map<string, number>();
  const arrivals: { key: string; at: number }[] = [];
  let waiting: { count: number; resolve: () => void } | undefined;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { key: string } };
      arrivals.push({ key: data.key, at });
      res.writeHead(204).end();
      if (waiting && arrivals.length >= waiting.count) waiting.resolve();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const log = pino({ level: 'warn' }) as unknown as FastifyBaseLogger;
  const watcher = new DataVersionWatcher(db, log);
  await watcher.start();
  const user = (await insertLocalUser(db, `bench-${process.pid}`))!;
  for (let i = 0; i < options.webhooks; i++)
    await createWebhook({ db, settings: SETTINGS, now: new Date() }, user.id, { url: `${url}/${i}` });
  const worker = startWebhookDeliveries({ db, settings: SETTINGS, log, watcher });
  const arrived = (count: number) =>
    new Promise<void>((resolve) => {
      if (arrivals.length >= count) return resolve();
      waiting = { count, resolve };
    });
  try {
    // Spaced: one change at a time, 50 to 350 ms apart (a sync's pace), as a consumer would see them.
    for (let i = 0; i < options.spaced; i++) {
      const key = await writeChapter(db);
      committed.set(key, performance.now());
      await pause(50 + Math.random() * 300);
    }
    await arrived(options.spaced * options.webhooks);
    const latencies = arrivals.map(({ key, at }) => at - committed.get(key)!).sort((a, b) => a - b);
    const spaced = {
      changes: options.spaced,
      deliveries: latencies.length,
      p50Ms: Math.round(percentile(latencies, 0.5)),
      p95Ms: Math.round(percentile(latencies, 0.95)),
      maxMs: Math.round(latencies.at(-1)!),
    };
    // Burst: many changes in one transaction (an import's unit), then every webhook gets every one.
    const before = arrivals.length;
    const start = performance.now();
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < options.burst; i++) await writeChapter(trx);
    });
    await arrived(before + options.burst * options.webhooks);
    const allDeliveredMs = Math.round(performance.now() - start);
    const deliveries = options.burst * options.webhooks;
    return {
      engine,
      webhooks: options.webhooks,
      spaced,
      burst: {
        changes: options.burst,
        deliveries,
        allDeliveredMs,
        perSecond: Math.round((deliveries / allDeliveredMs) * 1000),
      },
    };
  } finally {
    await worker.stop();
    await watcher.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/** Both engines (PostgreSQL when a server URL is set). */
export async function benchWebhooks(
  options: { webhooks?: number; spaced?: number; burst?: number; postgresUrl?: string } = {},
): Promise<WebhookBenchResult[]> {
  const sizes = { webhooks: options.webhooks ?? 5, spaced: options.spaced ?? 100, burst: options.burst ?? 1_000 };
  const results: WebhookBenchResult[] = [];
  const embedded = await openDatabase({ dataDir: 'memory://' });
  try {
    results.push(await measure('pglite', embedded, sizes));
  } finally {
    await embedded.close();
  }
  const serverUrl = options.postgresUrl ?? process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  if (serverUrl) {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    const name = `cds_bench_hooks_${process.pid}`;
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const server = await openDatabase({
        databaseUrl: Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString(),
        poolSize: 10,
      });
      try {
        results.push(await measure('postgres', server, sizes));
      } finally {
        await server.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
  return results;
}

export function formatWebhookResults(results: WebhookBenchResult[]): string {
  const lines = [
    '| engine | webhooks | spaced changes | deliveries | p50 | p95 | max | burst: changes | deliveries | all delivered in | deliveries/s |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results)
    lines.push(
      `| ${r.engine} | ${r.webhooks} | ${r.spaced.changes} | ${r.spaced.deliveries} | ${r.spaced.p50Ms} ms | ${r.spaced.p95Ms} ms | ${r.spaced.maxMs} ms | ${r.burst.changes} | ${r.burst.deliveries} | ${r.burst.allDeliveredMs} ms | ${r.burst.perSecond} |`,
    );
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = await benchWebhooks();
  process.stdout.write(formatWebhookResults(results));
  for (const r of results)
    if (r.spaced.p95Ms > 2_000) process.stderr.write(`${r.engine}: p95 ${r.spaced.p95Ms} ms is over the 2 s goal\n`);
}
