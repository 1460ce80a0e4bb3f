// Cost of running PGlite in a worker thread (src/db/embedded/pglite-host.ts) against the main-thread design it replaced
// (node-postgres over @electric-sql/pglite/node-postgres): time to open an in-memory database with the extensions,
// and per query, sequentially through Kysely, the wall time and the main thread's busy time (event-loop
// utilization), for `select 1` and for 100 rows of three columns. Two rounds, alternating.
//
//   npx tsx bench/pglite-overhead.ts            # N=2000 queries per measurement
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';
import { openDatabase } from '../src/db/index.ts';
import type { DB } from '../src/db/schema.ts';

const N = Number(process.env.N ?? 2000);

async function run(label: string, db: Kysely<DB>) {
  await sql`create table t as select g as id, 'name ' || g as name, now() as at from generate_series(1, 100) g`.execute(
    db,
  );
  for (const [q, text] of [
    ['select 1', sql`select 1 as x`],
    ['100 rows', sql`select * from t`],
  ] as const) {
    for (let i = 0; i < 200; i++) await text.execute(db);
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await text.execute(db);
    const wall = ((performance.now() - t0) / N) * 1000;
    const elu = performance.eventLoopUtilization(elu0);
    console.log(
      `${label} ${q}: ${wall.toFixed(0)} µs/query wall, event loop busy ${((elu.active / N) * 1000).toFixed(0)} µs/query`,
    );
  }
}
for (let round = 0; round < 2; round++) {
  let t0 = performance.now();
  const lite = await PGlite.create('memory://', { extensions: { pg_trgm, unaccent } });
  const pool = new pg.Pool(createPgConfig(lite) as unknown as pg.PoolConfig);
  const main = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  await sql`select 1`.execute(main);
  console.log(`main thread: open ${(performance.now() - t0).toFixed(0)} ms`);
  await run('main thread', main);
  await main.destroy();
  await lite.close();
  t0 = performance.now();
  const w = await openDatabase({ dataDir: 'memory://' });
  await sql`select 1`.execute(w.db);
  console.log(`worker: open ${(performance.now() - t0).toFixed(0)} ms`);
  await run('worker', w.db);
  await w.close();
}
