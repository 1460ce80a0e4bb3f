// CPU time of the server's own work per uncached list page, without sockets or a load generator: the app answers
// `app.inject` requests, 20 at a time, on PostgreSQL (named prepared statements, as served), and the process's CPU is
// read per round. On a shared, busy machine requests/s and wrk's CPU figures mostly measure the neighbours; two trees
// run at the same time (this script from each, on one database) share the same load, which makes their rounds
// comparable: issue 46's compile cache was measured so.
//   tsx bench/inject-cpu.ts [PATH] [ROUNDS]   (BENCH_DATABASE_URL names a seeded database to reuse, else one is made)
// The database holds the bench's data (bench/seed.ts: the bundled dataset plus 5000 synthetic issues); reads are
// anonymous (REST_AUTH=optional: the key check is answered from memory after the first request anyway).
import os from 'node:os';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/index.ts';
import { uncachedConfig } from './pgbench.ts';
import { benchDatabase } from './seed.ts';

const PATH = process.argv[2] ?? '/api/v0/issues/?limit=100';
const ROUNDS = Number(process.argv[3] ?? 10);
const PER_ROUND = 1_000;
const AT_ONCE = 20;

async function main(): Promise<void> {
  const bench = await benchDatabase('cds_inject');
  const database = await openDatabase({ databaseUrl: bench.url, preparedStatements: true });
  const config = uncachedConfig(bench.url);
  const app = await buildApp({ config, database });
  try {
    await app.ready();
    const batch = async (n: number) => {
      for (let i = 0; i < n; i += AT_ONCE) {
        const answers = await Promise.all(
          Array.from({ length: AT_ONCE }, () => app.inject({ method: 'GET', url: PATH })),
        );
        const failed = answers.find((a) => a.statusCode !== 200);
        if (failed) throw new Error(`${PATH}: ${failed.statusCode} ${failed.body}`);
      }
    };
    await batch(2 * PER_ROUND);
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const before = process.cpuUsage();
      await batch(PER_ROUND);
      const used = process.cpuUsage(before);
      rounds.push(Math.round((used.user + used.system) / PER_ROUND));
    }
    const sorted = [...rounds].sort((a, b) => a - b);
    console.log(
      `${PATH}: server µs/page by round ${rounds.join(' ')}; median ${sorted[Math.floor(sorted.length / 2)]}, ` +
        `least ${sorted[0]} (load average ${os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join(', ')})`,
    );
  } finally {
    await app.close();
    await database.close();
    await bench.drop();
  }
}

await main();
