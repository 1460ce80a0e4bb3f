import { sql, type Kysely } from 'kysely';
import { countryCode, countryName, countryRegion } from '../../geo/countries.ts';

// Countries as ISO 3166-1 codes beside one canonical name, and accent-blind search (issue 15).
export async function up(db: Kysely<unknown>): Promise<void> {
  // unaccent is a trusted extension (PostgreSQL 13+); PGlite loads it only when the instance is created
  // with it (src/db/index.ts). unaccent() itself is only STABLE (its dictionary could change), so indexes
  // use an IMMUTABLE wrapper that names the dictionary: the usual pattern, and the index's promise that the
  // rules file stays as it is.
  await sql`CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION cds_unaccent(text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$
  `.execute(db);
  // The trigram indexes of migration 0003, rebuilt on the unaccented text the search now compares.
  await sql`
    DROP INDEX IF EXISTS repositories_name_trgm_idx;
    DROP INDEX IF EXISTS repositories_language_trgm_idx;
    CREATE INDEX repositories_name_trgm_idx ON repositories USING gin (cds_unaccent(name) gin_trgm_ops) WITH (fastupdate = off);
    CREATE INDEX repositories_language_trgm_idx ON repositories USING gin (cds_unaccent(language) gin_trgm_ops) WITH (fastupdate = off);
    ALTER TABLE chapters ADD COLUMN country_code text NOT NULL DEFAULT '';
    CREATE INDEX chapters_country_code_idx ON chapters (country_code);
  `.execute(db);

  // Stored chapters get their code, canonical name and (when empty) region now; their coordinates are
  // placed again by the next import or website sync.
  const { rows } = await sql<{
    id: string;
    country: string;
    region: string;
  }>`SELECT id, country, region FROM chapters`.execute(db);
  for (const row of rows) {
    const code = countryCode(row.country);
    if (!code) continue;
    await sql`
      UPDATE chapters SET country_code = ${code}, country = ${countryName(code)},
        region = CASE WHEN region = '' THEN ${countryRegion(code)} ELSE region END
      WHERE id = ${row.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX chapters_country_code_idx;
    ALTER TABLE chapters DROP COLUMN country_code;
    DROP INDEX repositories_name_trgm_idx;
    DROP INDEX repositories_language_trgm_idx;
    CREATE INDEX repositories_name_trgm_idx ON repositories USING gin (name gin_trgm_ops) WITH (fastupdate = off);
    CREATE INDEX repositories_language_trgm_idx ON repositories USING gin (language gin_trgm_ops) WITH (fastupdate = off);
    DROP FUNCTION cds_unaccent(text);
  `.execute(db);
}
