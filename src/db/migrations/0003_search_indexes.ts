import { sql, type Kysely } from 'kysely';

// Indexes for the structured search `q` on repositories; each one was checked against the planner
// on 100,000 rows (bench/SEARCH.md). Projects and chapters (hundreds of rows) are scanned faster
// than any index would be read, so they get none.
export async function up(db: Kysely<unknown>): Promise<void> {
  // pg_trgm is a trusted extension (PostgreSQL 13+): the database owner may create it. PGlite loads
  // it only when the instance is created with it (src/db/index.ts).
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
  // Trigram GIN serves the unquoted `ILIKE '%…%'` of any length >= 3. fastupdate off: a pending list
  // is scanned linearly by every query until a vacuum merges it, and PGlite never autovacuums.
  await sql`
    CREATE INDEX repositories_name_trgm_idx ON repositories USING gin (name gin_trgm_ops) WITH (fastupdate = off);
    CREATE INDEX repositories_language_trgm_idx ON repositories USING gin (language gin_trgm_ops) WITH (fastupdate = off);
    CREATE INDEX repositories_name_idx ON repositories (name);
    CREATE INDEX repositories_stars_count_idx ON repositories (stars_count);
    CREATE INDEX repositories_forks_count_idx ON repositories (forks_count);
    CREATE INDEX repositories_contributors_count_idx ON repositories (contributors_count);
  `.execute(db);
}

// The extension stays: it may predate this migration or serve others, and it holds no data.
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX repositories_name_trgm_idx, repositories_language_trgm_idx, repositories_name_idx,
      repositories_stars_count_idx, repositories_forks_count_idx, repositories_contributors_count_idx;
  `.execute(db);
}
