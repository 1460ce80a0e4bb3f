import { sql, type Kysely } from 'kysely';
import { TOMBSTONED } from './0010_tombstones.ts';

// Search people can type (issue 26, GET /api/v0/search/): each searched table gets two generated columns, kept
// current by the database on every write path (import, sync, any UPDATE):
// - `search_name`: the record's name, lower case, without accents or punctuation (searchName); a trigram index
//   on it finds names from misspelt words (pg_trgm's word similarity) and serves exact and prefix matches;
// - `search_vector`: a weighted tsvector, the name (and key or login) at weight A both as written ('simple': no
//   stemming, so acronyms and names match as typed) and stemmed ('english': "sheets" finds "sheet"), the
//   description at B; a GIN index serves the full-text match.

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

/** Characters of the text indexed: a snippet comes from its start, and an issue's body can be long. */
export const INDEXED_TEXT_LENGTH = 2_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const t of SEARCHED) {
    const handle = t.handle ? ` || ' ' || ${t.handle}` : '';
    await sql
      .raw(
        `ALTER TABLE ${t.table}
          ADD COLUMN search_name text GENERATED ALWAYS AS (${searchName(t.name)}) STORED,
          ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('simple', cds_unaccent(${t.name}${handle})), 'A') ||
            setweight(to_tsvector('english', cds_unaccent(${t.name})), 'A') ||
            setweight(to_tsvector('english', cds_unaccent(left(${t.text}, ${INDEXED_TEXT_LENGTH}))), 'B')
          ) STORED;
        CREATE INDEX ${t.table}_search_vector_idx ON ${t.table} USING gin (search_vector) WITH (fastupdate = off);
        CREATE INDEX ${t.table}_search_name_trgm_idx ON ${t.table}
          USING gin (search_name gin_trgm_ops) WITH (fastupdate = off);`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of SEARCHED) {
    await sql.raw(`ALTER TABLE ${t.table} DROP COLUMN search_vector, DROP COLUMN search_name`).execute(db);
  }
}
