import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type Db } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { analyze, importDataset } from '../src/data/import/dataset.import.ts';

/** Synthetic issues spread over the stored repositories, so that issue pages hold 100 items. */
export async function seedIssues(db: Db, count: number): Promise<void> {
  await sql`
    INSERT INTO issues (github_id, repository_id, number, title, body, state, url, created_at, updated_at)
    SELECT 900000000 + g,
           r.id,
           100000 + g,
           'Synthetic issue number ' || g,
           repeat('Steps to reproduce, expected and actual behaviour. ', 4),
           CASE WHEN g % 3 = 0 THEN 'closed' ELSE 'open' END,
           'https://github.com/' || r.owner_login || '/' || r.name || '/issues/' || (100000 + g),
           timestamptz '2024-01-01' + g * interval '37 minutes',
           timestamptz '2024-01-02' + g * interval '41 minutes'
    FROM generate_series(1, ${count}::int) AS g
    JOIN LATERAL (SELECT id, owner_login, name FROM repositories ORDER BY id OFFSET (g % 10) LIMIT 1) r ON true
    ON CONFLICT DO NOTHING
  `.execute(db);
}

/** The benchmarks' database: migrated, the bundled dataset, `issues` synthetic issues, fresh statistics. */
export async function prepareBenchData(db: Db, issues: number): Promise<void> {
  await migrateToLatest(db);
  await importDataset(db);
  await seedIssues(db, issues);
  // As after `cds import`: fresh statistics, so no autovacuum runs in the middle of a measurement.
  await analyze(db);
}

/**
 * The database of a bench that measures one process against PostgreSQL: BENCH_DATABASE_URL's, reused as it is and kept,
 * or a new one on the server of DATABASE_URL (default the machine's) named `<prefix>_<pid>`, with the bench's data
 * (prepareBenchData, 5,000 synthetic issues), which `drop` removes.
 */
export async function benchDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const reuse = process.env.BENCH_DATABASE_URL;
  if (reuse) return { url: reuse, drop: async () => {} };
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `${prefix}_${process.pid}`;
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const seeding = await openDatabase({ databaseUrl: url });
  await prepareBenchData(seeding.db, 5_000);
  await seeding.close();
  return {
    url,
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.end().catch(() => {});
    },
  };
}
