// The snapshots rebuild on synthetic data: ISSUES issues over 15 years (default 1,000,000), a tenth as many
// members and releases, in 1,000 repositories. Times the first rebuild and a second one that changes nothing,
// then EXPLAIN ANALYZE of a sub-list page (one month of issues, page 6 of 100). Results: docs/decisions.md.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/snapshots.ts   # a temporary database on that server
//   ISSUES=200000 npx tsx bench/snapshots.ts                                           # an in-memory PGlite
import { sql } from 'kysely';
import { createTestDb } from '../test/helpers.ts';
import { rebuildSnapshots } from '../src/data/snapshots/monthly-snapshots.queries.ts';

const ISSUES = Number(process.env.ISSUES ?? 1_000_000);
const database = await createTestDb();
const { db } = database;
try {
  await sql`INSERT INTO repositories (github_id, owner_login, name, topics, created_at, updated_at)
    SELECT g, 'o', 'r' || g, '[]', now(), now() FROM generate_series(1, 1000) g`.execute(db);
  await sql`INSERT INTO issues (github_id, repository_id, number, title, state, created_at, updated_at)
    SELECT g, (SELECT min(id) FROM repositories) + g % 1000, g, 'issue ' || g, 'open',
      timestamptz '2010-01-01' + (g::float / ${ISSUES}) * interval '15 years', now()
    FROM generate_series(1, ${ISSUES}) g`.execute(db);
  await sql`INSERT INTO members (github_id, login, created_at, updated_at)
    SELECT g, 'u' || g, timestamptz '2008-01-01' + (g::float / ${ISSUES / 10}) * interval '17 years', now()
    FROM generate_series(1, ${ISSUES / 10}) g`.execute(db);
  await sql`INSERT INTO releases (github_id, repository_id, tag_name, name, created_at)
    SELECT g, (SELECT min(id) FROM repositories) + g % 1000, 'v' || g, 'r', timestamptz '2012-01-01' + (g::float / ${ISSUES / 10}) * interval '13 years'
    FROM generate_series(1, ${ISSUES / 10}) g`.execute(db);
  await sql`ANALYZE`.execute(db);
  for (const label of ['first rebuild', 'rebuild without changes']) {
    const started = performance.now();
    const result = await rebuildSnapshots(db, new Date('2026-11-24T00:00:00Z'));
    console.log(`${label}: ${Math.round(performance.now() - started)} ms`, result);
  }
  const { id } = (await sql<{ id: string }>`SELECT id FROM snapshots WHERE key = '2020-06'`.execute(db)).rows[0]!;
  const plan = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ANALYZE SELECT title, created_at FROM issues
    WHERE issues.created_at BETWEEN (SELECT start_at FROM snapshots WHERE id = ${id}) AND (SELECT end_at FROM snapshots WHERE id = ${id})
    ORDER BY issues.created_at DESC, issues.id DESC LIMIT 100 OFFSET 500`.execute(db);
  console.log(plan.rows.map((row) => row['QUERY PLAN']).join('\n'));
} finally {
  await database.drop();
}
