// The ranked search across resources (GET /api/v0/search/, issue 26): one statement, a branch per resource.
// A record is a candidate when its full-text vector matches every word (each as a prefix, as written or stemmed)
// or its name is similar to the query word by word (pg_trgm's word similarity, which forgives a typo in a word of
// four letters or more); candidates are ranked by how well the name matches (exact, prefix, containing), the
// similarity of the name, the full-text rank (name above description) and a small weight per resource.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { SEARCHED, searchName, type SearchedTable } from '../../../db/migrations/0011_fulltext_search.ts';

export const SEARCH_RESOURCES = SEARCHED.map((t) => t.resource);

/** Results a query can page through: a search engine's first pages, not a list to walk (the lists are for that). */
export const MAX_RESULTS = 500;
/** Candidates ranked per resource and branch: bounds the work of a common word on a table of a million rows. */
const CANDIDATES = 1_000;
/** pg_trgm's word similarity at or above which a name is a candidate: one edit in a 4-letter word scores 0.4. */
const SIMILARITY_THRESHOLD = 0.4;
/** Words of the query used for the full-text match (the trigram match reads the whole text). */
const MAX_WORDS = 8;

/**
 * A small preference between resources for an otherwise equal match: the community's projects and chapters before
 * the records mirrored from GitHub, an issue last (there are a million of them, and a title often repeats a name).
 */
const RESOURCE_WEIGHT: Record<string, number> = {
  projects: 0.3,
  chapters: 0.25,
  committees: 0.2,
  events: 0.15,
  organizations: 0.12,
  repositories: 0.1,
  sponsors: 0.1,
  members: 0.05,
  issues: 0,
};

export interface SearchRow {
  resource: string;
  id: string;
  name: string;
  text: string;
  score: number;
  total: number;
}

/** The words of a query as the full-text match reads them: letters and digits, lower case. */
export function queryWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_WORDS).map((w) => w.slice(0, 64));
}

/** Each word as a prefix, as written or stemmed (English), every word required. */
function tsquery(words: string[]): RawBuilder<unknown> {
  if (words.length === 0) return sql`''::tsquery`;
  const terms = words.map(
    (word) =>
      sql`(to_tsquery('simple', cds_unaccent(${word}) || ':*') || to_tsquery('english', cds_unaccent(${word}) || ':*'))`,
  );
  return sql.join(terms, sql` && `);
}

/** The detail path's identifier of a record (what follows `/api/v0/<resource>/`). */
function idOf(t: SearchedTable): string {
  if (t.resource === 'repositories') return "t.owner_login || '/' || t.name";
  if (t.resource === 'issues') return "r.owner_login || '/' || r.name || '/' || t.number";
  return `t.${t.handle ?? 'key'}`;
}

function branch(t: SearchedTable): RawBuilder<unknown> {
  const visible = t.visible ? `${t.visible} AND ` : '';
  const handle = t.handle ? `OR lower(t.${t.handle}) = q.n` : '';
  const join = t.resource === 'issues' ? 'JOIN repositories r ON r.id = t.repository_id' : '';
  const field = (expression: string) =>
    expression.replace(/\b(name|login|key|title|description|bio|body|company|location|owner_login)\b/g, 't.$1');
  return sql.raw(`
    SELECT '${t.resource}' AS resource, ${idOf(t)} AS id, ${field(t.name)} AS name,
      left(${field(t.text)}, 600) AS text,
      (CASE
        WHEN t.search_name = q.n OR t.search_name = 'owasp ' || q.n ${handle}
          OR lower(${field(t.name)}) LIKE '%(' || q.l || ')%' THEN 8
        WHEN t.search_name LIKE q.l || '%' OR t.search_name LIKE 'owasp ' || q.l || '%' THEN 4
        WHEN ' ' || t.search_name LIKE '% ' || q.l || '%' THEN 2
        ELSE 0 END)
        + 3 * word_similarity(q.n, t.search_name)
        + 2 * strict_word_similarity(q.n, t.search_name)
        + 2 * ts_rank(t.search_vector, q.tsq)
        + ${RESOURCE_WEIGHT[t.resource] ?? 0} AS score
    FROM q, LATERAL (
      (SELECT t.id FROM ${t.table} t WHERE ${visible}t.search_vector @@ q.tsq LIMIT ${CANDIDATES})
      UNION
      (SELECT t.id FROM ${t.table} t WHERE ${visible}t.search_name %> q.n LIMIT ${CANDIDATES})
    ) candidate
    JOIN ${t.table} t ON t.id = candidate.id ${join}`);
}

/**
 * The page of results of `text` in `resources` from `offset`, best first, each row with the number of candidates
 * (`total`, at most CANDIDATES × 2 a resource). The statement runs in a transaction of its own, which sets pg_trgm's
 * threshold for it alone.
 */
export async function searchRecords(
  db: Db,
  text: string,
  resources: readonly string[],
  limit: number,
  offset: number,
): Promise<SearchRow[]> {
  const tables = SEARCHED.filter((t) => resources.includes(t.resource));
  const words = queryWords(text);
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('pg_trgm.word_similarity_threshold', ${String(SIMILARITY_THRESHOLD)}, true)`.execute(
      trx,
    );
    const { rows } = await sql<SearchRow>`
      WITH q AS (
        SELECT n, replace(replace(replace(n, '\\', '\\\\'), '%', '\\%'), '_', '\\_') AS l, ${tsquery(words)} AS tsq
        FROM (SELECT ${sql.raw(searchName('raw.text'))} AS n FROM (SELECT ${text}::text AS text) AS raw) AS normalized
      ),
      found AS (${sql.join(tables.map(branch), sql` UNION ALL `)})
      SELECT resource, id, name, text, round(score::numeric, 4)::float8 AS score, count(*) OVER ()::int AS total
      FROM found
      ORDER BY score DESC, resource, id
      LIMIT ${limit} OFFSET ${offset}`.execute(trx);
    return rows;
  });
}
