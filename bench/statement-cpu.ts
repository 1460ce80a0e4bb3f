// PostgreSQL's CPU for a request's SQL alone, read from the one backend that runs it (issue 46): the statements the
// app sends for one GET (captured as bench/pgbench.ts captures them), executed one after the other on one connection,
// as named prepared statements (as the serving pools send them) and unnamed (parsed and planned each time), in
// alternating rounds. The backend's own /proc figures count nothing of other sessions of a shared cluster, which
// all-of-PostgreSQL figures do (bench/cpu.ts), and the rounds' spread shows how noisy the machine was.
//   tsx bench/statement-cpu.ts [PATH] [ROUNDS]
// BENCH_DATABASE_URL names a seeded database to reuse (bench/seed.ts's data), else one is made and dropped.
import pg from 'pg';
import os from 'node:os';
import { captureSql } from './pgbench.ts';
import { cpuMicros } from './cpu.ts';
import { benchDatabase } from './seed.ts';

const PATH = process.argv[2] ?? '/api/v0/issues/?limit=100';
const ROUNDS = Number(process.argv[3] ?? 5);
const PER_ROUND = 500;

async function main(): Promise<void> {
  const bench = await benchDatabase('cds_statement_cpu');
  const url = bench.url;
  const client = new pg.Client({ connectionString: url });
  try {
    const statements = (await captureSql(url, [PATH])).get(PATH)!;
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const pid = rows[0]!.pid;
    const run = async (named: boolean) => {
      for (const [i, s] of statements.entries())
        await client.query(named ? { name: `s${i}`, text: s.sql, values: [...s.parameters] } : s.sql, [
          ...s.parameters,
        ]);
    };
    const rounds = { named: [] as number[], unnamed: [] as number[] };
    for (const named of [true, false]) for (let i = 0; i < 20; i++) await run(named);
    for (let r = 0; r < ROUNDS; r++) {
      for (const named of [true, false]) {
        const before = await cpuMicros([pid]);
        for (let i = 0; i < PER_ROUND; i++) await run(named);
        rounds[named ? 'named' : 'unnamed'].push(Math.round(((await cpuMicros([pid])) - before) / PER_ROUND));
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const s of statements)
      console.log(`  ${s.sql.replace(/\s+/g, ' ').slice(0, 100)}… [${s.parameters.length} values]`);
    console.log(
      `${PATH}: ${statements.length} statement(s); PostgreSQL backend µs per request, named (prepared) by round ` +
        `${rounds.named.join(' ')}, median ${median(rounds.named)}; unnamed ${rounds.unnamed.join(' ')}, median ` +
        `${median(rounds.unnamed)} (load average ${os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join(', ')})`,
    );
  } finally {
    await client.end().catch(() => {});
    await bench.drop();
  }
}

await main();
