// The cost of the tombstone row trigger (migration 0010) on bulk writes of issues, on PostgreSQL: the same INSERT
// and UPDATE and DELETE of N issues with the trigger enabled and disabled, alternated, median of three. Reports milliseconds.
// Run: N=100000 node --import tsx bench/tombstone-trigger.ts (a scratch database on 127.0.0.1:5432, dropped after).
import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
const name = `cds_trig_${process.pid}`;
const admin = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres', poolSize: 1 });
await sql.raw(`CREATE DATABASE ${name}`).execute(admin.db);
const database = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:5432/${name}`, poolSize: 2 });
const db = database.db;
try {
  await migrateToLatest(db);
  await sql`INSERT INTO repositories (github_id, owner_login, name, created_at, updated_at) VALUES (1, 'o', 'r', now(), now())`.execute(
    db,
  );
  const N = Number(process.env.N ?? 200000);
  const load = async (base: number) => {
    const t0 = performance.now();
    await sql`INSERT INTO issues (github_id, repository_id, number, title, state, url, created_at, updated_at)
      SELECT ${base} + g, (SELECT min(id) FROM repositories), ${base} + g, 'Issue ' || g, 'open', 'https://x/' || (${base} + g), now(), now()
      FROM generate_series(1, ${N}) AS g`.execute(db);
    const t1 = performance.now();
    await sql`UPDATE issues SET title = title || '!' WHERE github_id > ${base}`.execute(db);
    const t2 = performance.now();
    await sql`DELETE FROM issues WHERE github_id > ${base} AND github_id <= ${base + N}`.execute(db);
    const t3 = performance.now();
    return [t1 - t0, t2 - t1, t3 - t2];
  };
  const runs: Record<string, number[][]> = { with: [], without: [] };
  for (let i = 0; i < 3; i++) {
    runs.with!.push(await load(10_000_000 * (2 * i + 1)));
    await sql`ALTER TABLE issues DISABLE TRIGGER cds_tombstone`.execute(db);
    runs.without!.push(await load(10_000_000 * (2 * i + 2)));
    await sql`ALTER TABLE issues ENABLE TRIGGER cds_tombstone`.execute(db);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[1]!;
  for (const [k, rs] of Object.entries(runs))
    console.log(
      k,
      'insert ms',
      median(rs.map((r) => r[0]!)).toFixed(0),
      'update ms',
      median(rs.map((r) => r[1]!)).toFixed(0),
      'delete ms',
      median(rs.map((r) => r[2]!)).toFixed(0),
    );
} finally {
  await database.close();
  await sql.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).execute(admin.db);
  await admin.close();
}
