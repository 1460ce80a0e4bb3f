import { sql } from 'kysely';
import type { Db } from '../src/db/index.ts';
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
