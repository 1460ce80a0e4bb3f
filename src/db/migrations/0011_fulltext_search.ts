import { sql, type Kysely } from 'kysely';
import { TOMBSTONED } from './0010_tombstones.ts';

// Search people can type (issue 26, GET /api/v0/search/): each searched table gets two generated columns, kept
// current by the database on every write path (import, sync, any UPDATE):
// - `search_name`: the record's name, lower case, without accents or punctuation (searchName); a trigram index
//   on it finds names from misspelt words (pg_trgm's word similarity) and serves exact and prefix matches;
// - `search_vector`: a weighted tsvector, the name folded as `search_name` (so that its words are those of
//   `search_words`, and markup in a name is words, not a tag the parser would drop) and the key or login, at weight A
//   both as written ('simple': no stemming, so acronyms and names match as typed) and stemmed ('english': "sheets"
//   finds "sheet"), the description at B; a GIN index serves the full-text match.
// And one table, `search_words`: the distinct words of every `search_name` (4–40 characters, not only digits), with a
// trigram index. A query word that is no such word is looked up there for its neighbours one edit away (`londn` →
// `london`), which the full-text match then also accepts: typo tolerance that costs a lookup in a table of words
// instead of a trigram comparison with a million titles. Statement-level triggers (transition tables) add the words
// of every inserted or updated row; a word whose records are gone stays, harmlessly (it matches nothing).

export interface SearchedTable {
  /** The path segment of the resource, `/api/v0/<resource>/`. */
  resource: string;
  table: string;
  /** The name a person knows the record by (SQL over the table's columns). */
  name: string;
  /** The record's handle (key or login), matched exactly. */
  handle?: string;
  /** The text below the name (SQL), searched at weight B; its start is what a snippet shows. */
  text: string;
  /** When the record is in its list (SQL over `t`, the table's alias); undefined: always. */
  visible?: string;
}

const visibility = (resource: string): string | undefined => {
  const condition = TOMBSTONED.find((t) => t.resource === resource)?.visible('t');
  return condition === 'true' ? undefined : condition;
};

const community = (resource: string): SearchedTable => ({
  resource,
  table: resource,
  name: 'name',
  handle: 'key',
  text: 'description',
  ...(visibility(resource) ? { visible: visibility(resource)! } : {}),
});

export const SEARCHED: readonly SearchedTable[] = [
  community('chapters'),
  community('committees'),
  community('events'),
  community('projects'),
  community('sponsors'),
  {
    resource: 'members',
    table: 'members',
    name: "CASE WHEN name <> '' THEN name ELSE login END",
    handle: 'login',
    text: "bio || ' ' || company || ' ' || location",
    visible: visibility('members')!,
  },
  {
    resource: 'organizations',
    table: 'organizations',
    name: "CASE WHEN name <> '' THEN name ELSE login END",
    handle: 'login',
    text: "description || ' ' || location",
    visible: visibility('organizations')!,
  },
  { resource: 'repositories', table: 'repositories', name: 'name', text: "description || ' ' || owner_login" },
  { resource: 'issues', table: 'issues', name: 'title', text: 'body' },
];

/**
 * A name as the search compares it: lower case, without accents, every run of other characters than letters and
 * digits one space ("OWASP Application Security Verification Standard (ASVS)" → "owasp application security
 * verification standard asvs"). The query goes through the same expression.
 */
export function searchName(expression: string): string {
  return `btrim(regexp_replace(lower(cds_unaccent(${expression})), '[^[:alnum:]]+', ' ', 'g'))`;
}

/**
 * pg_trgm's thresholds the search relies on, set for every session (db/index.ts: the PostgreSQL pools' startup
 * options, the embedded database's start parameters), so that no search needs a transaction to set them:
 * - word similarity at or above which a name is a candidate for the whole query (`%>`): one edit in a word of four
 *   letters scores 0.4 (pg_trgm's default, 0.6, misses `juise` for `juice`, 0.5);
 * - similarity at or above which a known word is a neighbour of a query word (`%`): `shpo`/`shop` scores 0.25.
 * Nothing else of the service uses these operators (the structured `q` uses ILIKE).
 */
export const TRIGRAM_SETTINGS: Readonly<Record<string, string>> = {
  'pg_trgm.word_similarity_threshold': '0.4',
  'pg_trgm.similarity_threshold': '0.2',
};

/** TRIGRAM_SETTINGS as PostgreSQL's start-up arguments (`-c name=value`, each a pair). */
export const TRIGRAM_START_PARAMS: readonly string[] = Object.entries(TRIGRAM_SETTINGS).flatMap(([name, value]) => [
  '-c',
  `${name}=${value}`,
]);

/** Characters of the text indexed: a snippet comes from its start, and an issue's body can be long. */
export const INDEXED_TEXT_LENGTH = 2_000;

/** The words of a `search_name` kept in `search_words` (SQL over a relation with a `search_name` column). */
const WORDS = (relation: string) => `
  SELECT DISTINCT w FROM ${relation}, unnest(tsvector_to_array(to_tsvector('simple', ${relation}.search_name))) AS w
  WHERE length(w) BETWEEN 4 AND 40 AND w !~ '^[0-9]+$'`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `CREATE TABLE search_words (word text PRIMARY KEY);
      CREATE INDEX search_words_trgm_idx ON search_words USING gin (word gin_trgm_ops) WITH (fastupdate = off);
      CREATE FUNCTION cds_collect_search_words() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO search_words (word) ${WORDS('new_rows')} ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$;`,
    )
    .execute(db);
  for (const t of SEARCHED) {
    const handle = t.handle ? ` || ' ' || ${t.handle}` : '';
    await sql
      .raw(
        `ALTER TABLE ${t.table}
          ADD COLUMN search_name text GENERATED ALWAYS AS (${searchName(t.name)}) STORED,
          ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('simple', ${searchName(t.name)}${handle}), 'A') ||
            setweight(to_tsvector('english', ${searchName(t.name)}), 'A') ||
            setweight(to_tsvector('english', cds_unaccent(left(${t.text}, ${INDEXED_TEXT_LENGTH}))), 'B')
          ) STORED;
        CREATE INDEX ${t.table}_search_vector_idx ON ${t.table} USING gin (search_vector) WITH (fastupdate = off);
        CREATE INDEX ${t.table}_search_name_trgm_idx ON ${t.table}
          USING gin (search_name gin_trgm_ops) WITH (fastupdate = off);
        INSERT INTO search_words (word) ${WORDS(t.table)} ON CONFLICT DO NOTHING;
        CREATE TRIGGER ${t.table}_search_words_insert AFTER INSERT ON ${t.table}
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cds_collect_search_words();
        CREATE TRIGGER ${t.table}_search_words_update AFTER UPDATE ON ${t.table}
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cds_collect_search_words();`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of SEARCHED) {
    await sql
      .raw(
        `DROP TRIGGER ${t.table}_search_words_insert ON ${t.table};
        DROP TRIGGER ${t.table}_search_words_update ON ${t.table};
        ALTER TABLE ${t.table} DROP COLUMN search_vector, DROP COLUMN search_name;`,
      )
      .execute(db);
  }
  await sql.raw('DROP FUNCTION cds_collect_search_words(); DROP TABLE search_words;').execute(db);
}
