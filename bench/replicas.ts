// npm run bench:replicas: REST reads with one read replica against without (issue 29, item 2), in one run. A private
// primary and a streaming replica of it (pg_basebackup -R, test/postgres-server.ts), CHAPTERS chapters generated on the
// primary, then two servers on the same primary, one with DATABASE_REPLICA_URLS and one without (response cache off,
// no Redis). ROUNDS rounds, each loading one server then the other for ROUND_SECONDS (the order alternates): CLIENTS
// clients read deep list pages and details as fast as they are answered (throughput), while one more client reads one
// detail after the other (its p99), and CHANGES_PER_SECOND changes of the data are written on the primary (noticed
// within a second, by the data version's poll: no Redis). Reported per server: the medians over the rounds, and the
// ratios with/without.
// Results: bench/SCALE.md (read replicas).
//
//   npm run bench:replicas
//   CHAPTERS=20000 ROUNDS=2 ROUND_SECONDS=3 npm run bench:replicas   # quicker
import os from 'node:os';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';
import { exited, freePort, startServer, waitFor200 } from '../test/process.ts';
import { startPrivatePostgres, startPrivateStandby } from '../test/postgres-server.ts';

const CHAPTERS = Number(process.env.CHAPTERS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const ROUND_SECONDS = Number(process.env.ROUND_SECONDS ?? 5);
const CLIENTS = Number(process.env.CLIENTS ?? 8);
const CHANGES_PER_SECOND = Number(process.env.CHANGES_PER_SECOND ?? 2);

interface Round {
  requests: number;
  errors: number;
  detailP50: number;
  detailP99: number;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const median = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
const random = (n: number) => 1 + Math.floor(Math.random() * n);

/** One round against `base`: CLIENTS readers of lists and details, one detail client timed, and the writer. */
async function round(base: string, writer: Db): Promise<Round> {
  const until = performance.now() + ROUND_SECONDS * 1000;
  // A change of the data every 1/CHANGES_PER_SECOND s, as a sync's units commit: a new data version each time, which
  // the replica must replay before it takes reads again.
  const changes = (async () => {
    for (let n = 1; CHANGES_PER_SECOND > 0 && performance.now() < until; n++) {
      await writer.transaction().execute(async (trx) => {
        await trx
          .updateTable('chapters')
          .set({ name: `OWASP Bench ${n} (renamed)`, updated_at: new Date() })
          .where('key', '=', `bench-${random(CHAPTERS)}`)
          .execute();
        await bumpDataVersion(trx);
      });
      await new Promise((resolve) => setTimeout(resolve, 1000 / CHANGES_PER_SECOND));
    }
  })();
  let requests = 0;
  let errors = 0;
  const get = async (url: string) => {
    const res = await fetch(`${base}${url}`);
    await res.arrayBuffer();
    if (res.status !== 200) errors++;
    requests++;
  };
  const readers = Array.from({ length: CLIENTS }, async (_, i) => {
    while (performance.now() < until) {
      // Half deep pages (an OFFSET scan of up to 20,000 rows and the count), half details.
      if (i % 2 === 0) await get(`/api/v0/chapters/?limit=50&page=${random(Math.min(400, CHAPTERS / 50))}`);
      else await get(`/api/v0/chapters/bench-${random(CHAPTERS)}`);
    }
  });
  const timings: number[] = [];
  const timed = (async () => {
    while (performance.now() < until) {
      const started = performance.now();
      await get(`/api/v0/chapters/bench-${random(CHAPTERS)}`);
      timings.push(performance.now() - started);
    }
  })();
  await Promise.all([...readers, timed, changes]);
  timings.sort((a, b) => a - b);
  return { requests, errors, detailP50: quantile(timings, 0.5), detailP99: quantile(timings, 0.99) };
}

async function replicaShare(base: string): Promise<string> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const onReplica = Number(/^cds_replica_reads_total\{[^}]*\} (\d+)$/m.exec(text)?.[1] ?? 0);
  const onPrimary = Number(/^cds_replica_primary_reads_total (\d+)$/m.exec(text)?.[1] ?? 0);
  return `${onReplica} of ${onReplica + onPrimary} read queries on the replica`;
}

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-bench-replicas-'));
const primary = await startPrivatePostgres();
const servers: ReturnType<typeof startServer>[] = [];
let replica: Awaited<ReturnType<typeof startPrivateStandby>> | undefined;
try {
  const database = await openDatabase({ databaseUrl: primary.url });
  const generated = performance.now();
  await migrateToLatest(database.db);
  await sql`
    INSERT INTO chapters (key, name, is_active, latitude, longitude, related_urls, contribution_data,
                          contribution_stats, country_code, created_at, updated_at)
    SELECT 'bench-' || n, 'OWASP Bench ' || n, true, (n % 170) - 85, (n % 360) - 180, '[]', '{}', '{}', '',
           now() - n * interval '1 minute', now()
    FROM generate_series(1, ${CHAPTERS}) AS n`.execute(database.db);
  await bumpDataVersion(database.db);
  await sql`VACUUM ANALYZE chapters`.execute(database.db);
  const generatedMs = performance.now() - generated;
  // After the data: the base backup copies it (streaming from the start would measure the catch-up, not the reads).
  replica = await startPrivateStandby(primary);
  const env = { DATABASE_URL: primary.url, AUTO_IMPORT: 'false', REST_AUTH: 'optional', RESPONSE_CACHE: 'false' };
  const configurations = [
    { name: 'primary only', env: {} },
    { name: 'one replica', env: { DATABASE_REPLICA_URLS: replica.url } },
  ];
  const bases: string[] = [];
  for (const [i, configuration] of configurations.entries()) {
    const port = await freePort();
    const server = startServer({
      ...env,
      ...configuration.env,
      RATE_LIMIT_PER_SECOND: '1000000',
      PORT: String(port),
      DATA_DIR: path.join(tmp, `data-${i}`),
    });
    servers.push(server);
    bases.push(`http://127.0.0.1:${port}`);
    await waitFor200(`${bases[i]}/readyz`, 60_000);
  }
  // Warm both (connections, plans, the pages' boundaries) before measuring.
  for (const base of bases) await round(base, database.db);
  const results: Round[][] = [[], []];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) results[i]!.push(await round(bases[i]!, database.db));
  }
  const [load1, load5, load15] = os.loadavg().map((load) => load.toFixed(2));
  const { rows } = await sql<{ version: string }>`SELECT version()`.execute(database.db);
  await database.close();
  console.log(`# bench:replicas at ${new Date().toISOString()}`);
  console.log(`# ${os.cpus().length} CPUs, load average ${load1} ${load5} ${load15}`);
  console.log(`# ${rows[0]!.version.split(' on ')[0]}: primary and one streaming replica on this machine`);
  console.log(`# ${CHAPTERS} chapters generated in ${(generatedMs / 1000).toFixed(1)} s`);
  console.log(
    `\n${ROUNDS} rounds of ${ROUND_SECONDS} s per server, alternating; ${CLIENTS} clients reading deep pages of /chapters/ ` +
      `(limit 50, pages 1–400) and details, plus one client timing details one after the other; ${CHANGES_PER_SECOND} ` +
      'changes of the data per second (a renamed chapter and a new data version, on the primary). Medians over the rounds.\n',
  );
  console.log('| server | requests/s | detail p50 ms | detail p99 ms | non-200 |');
  console.log('|---|---:|---:|---:|---:|');
  const summary = results.map((rounds) => ({
    rate: median(rounds.map((round) => round.requests / ROUND_SECONDS)),
    p50: median(rounds.map((round) => round.detailP50)),
    p99: median(rounds.map((round) => round.detailP99)),
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
  }));
  for (const [i, configuration] of configurations.entries()) {
    const s = summary[i]!;
    console.log(
      `| ${configuration.name} | ${s.rate.toFixed(0)} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.errors} |`,
    );
  }
  const [without, withReplica] = summary as [(typeof summary)[0], (typeof summary)[0]];
  console.log(
    `\nWith the replica / without: throughput ×${(withReplica.rate / without.rate).toFixed(2)}, ` +
      `detail p50 ×${(withReplica.p50 / without.p50).toFixed(2)}, p99 ×${(withReplica.p99 / without.p99).toFixed(2)}. ` +
      `The replica's server: ${await replicaShare(bases[1]!)}.`,
  );
  for (const [i, configuration] of configurations.entries()) {
    console.log(
      `${configuration.name}, per round: ` +
        results[i]!.map(
          (round) => `${(round.requests / ROUND_SECONDS).toFixed(0)} req/s p99 ${round.detailP99.toFixed(1)}`,
        ).join('; '),
    );
  }
} finally {
  for (const server of servers) {
    server.kill('SIGTERM');
    await exited(server);
  }
  await replica?.destroy();
  await primary.destroy();
  await fs.rm(tmp, { recursive: true, force: true });
}
