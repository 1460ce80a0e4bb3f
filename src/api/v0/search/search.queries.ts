// The ranked search across resources (GET /api/v0/search/, issue 26): one statement, a branch per resource.
// A record is a candidate when its full-text vector matches every word of the query (as written or stemmed; the last
// word also as a prefix while it is no known word), each word standing also for its known neighbours one edit away
// (`search_words`: typo tolerance without comparing a million titles); on the small community tables, also when its
// name is similar to the query (pg_trgm's word similarity). Candidates are ranked by how well the name matches
// (exact, prefix, containing), the similarity of the name, the full-text rank (name above description) and a small
// weight per resource. docs/search.md has the numbers and why; bench/SEARCH.md the timings.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { editDistance } from '../../../text.ts';
import { SEARCHED, searchName, type SearchedTable } from '../../../db/migrations/0011_fulltext_search.ts';

export const SEARCH_RESOURCES = SEARCHED.map((t) => t.resource);

/** Results a query can page through: a search engine's first pages, not a list to walk (the lists are for that). */
export const MAX_RESULTS = 500;
/**
 * Candidates ranked per large table: bounds the work of a common word on a table of a million rows (the first found,
 * not the best of all: a sequential scan that stops after 100 matches is what makes a word in a third of the issues
 * cheap). The small tables (hundreds of rows) rank every candidate.
 */
const CANDIDATES = 100;
const SMALL_CANDIDATES = 1_000;
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

/** The edits forgiven in a word: one from four letters, two from eight. */
const allowedEdits = (word: string) => (word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0);
/** Spellings of one query word looked for (itself and its known neighbours). */
const MAX_ALTERNATIVES = 6;

/** A spelling of a query word, with its full-text forms (`simple` and `english`, as tsquery text). */
interface Spelling {
  word: string;
  /** The word whole: `'sheets' | 'sheet'`. */
  whole: string;
  /** The word as a prefix: `'sheets':* | 'sheet':*`. */
  prefix: string;
}

/** A query word as the full-text match looks for it. */
export interface Term {
  /** The word as the names fold it (lower case, no accents), then the known words one or two edits from it. */
  spellings: Spelling[];
  /** The last word, not a known word yet: matched as a prefix as typed (the person may still be typing it). */
  prefix: boolean;
  /** Neither a known word nor one edit from one: only the names' trigrams may find what it means. */
  unmatched: boolean;
}

interface Prepared {
  /** The whole query as `search_name` folds a name. */
  n: string;
  words: { w: Spelling; known: boolean; near: Spelling[] }[];
}

/** A word's full-text forms, as tsquery text (SQL over the word `x`). */
const FORMS = (x: string) => `json_build_object('word', ${x},
  'whole', (to_tsquery('simple', ${x}) || to_tsquery('english', ${x}))::text,
  'prefix', (to_tsquery('simple', ${x} || ':*') || to_tsquery('english', ${x} || ':*'))::text)`;

/**
 * The query folded as the names are, and each word that is no known word with its neighbours among the known words
 * (`search_words`: pg_trgm's similarity ≥ 0.2 through its trigram index, at most two letters longer or shorter, the
 * 16 most similar), each with its full-text forms, in one round trip: the ranking statement then carries its tsquery
 * as one constant. A known word (most words) costs one lookup in the primary key.
 */
async function prepare(db: Db, text: string, words: string[]): Promise<{ n: string; terms: Term[] }> {
  const { rows } = await sql<Prepared>`
    SELECT ${sql.raw(searchName('raw.text'))} AS n,
      (SELECT coalesce(json_agg(json_build_object(
          'w', ${sql.raw(FORMS('q.w'))},
          'known', q.known,
          'near', CASE WHEN q.known OR length(q.w) < 4 THEN '{}' ELSE ARRAY(
            SELECT ${sql.raw(FORMS('s.word'))} FROM search_words s
            WHERE s.word % q.w AND length(s.word) BETWEEN length(q.w) - 2 AND length(q.w) + 2
            ORDER BY similarity(s.word, q.w) DESC, s.word LIMIT 16) END
        ) ORDER BY q.i), '[]'::json)
       FROM (
         SELECT w, i, EXISTS (SELECT 1 FROM search_words s WHERE s.word = w) AS known
         FROM (
           SELECT regexp_replace(lower(cds_unaccent(w)), '[^[:alnum:]]+', '', 'g') AS w, i
           FROM unnest(${words}::text[]) WITH ORDINALITY AS u(w, i)
         ) AS folded WHERE w <> ''
       ) AS q
      ) AS words
    FROM (SELECT ${text}::text AS text) AS raw`.execute(db);
  const prepared = rows[0]!;
  const last = prepared.words.length - 1;
  const terms = prepared.words.map(({ w, known, near }, i): Term => {
    const edits = allowedEdits(w.word);
    const neighbours = known
      ? []
      : near.filter((s) => s.word !== w.word && editDistance(s.word, w.word, edits) <= edits);
    return {
      spellings: [w, ...neighbours].slice(0, MAX_ALTERNATIVES),
      prefix: i === last && !known,
      // (Words under four letters are never in search_words: they are matched as they are.)
      unmatched: !known && neighbours.length === 0 && w.word.length >= 4,
    };
  });
  return { n: prepared.n, terms };
}

/** Every term required; a term is any of its spellings, as written or stemmed (English); see Term.prefix. */
function tsquery(terms: Term[]): RawBuilder<unknown> {
  const parts = terms
    // A correction is a whole word (a prefix of a real word collects every word it starts: ~10 ms on a million
    // issues against ~2 for the word), the word as typed a prefix when it is the last and no known word.
    .map(({ spellings, prefix }) => spellings.map((s, i) => (prefix && i === 0 ? s.prefix : s.whole)).filter(Boolean))
    .filter((forms) => forms.length > 0)
    .map((forms) => `(${forms.join(' | ')})`);
  return sql`${parts.join(' & ')}::tsquery`;
}

/** The detail path's identifier of a record (what follows `/api/v0/<resource>/`). */
function idOf(t: SearchedTable): string {
  if (t.resource === 'repositories') return "t.owner_login || '/' || t.name";
  if (t.resource === 'issues') return "r.owner_login || '/' || r.name || '/' || t.number";
  return `t.${t.handle ?? 'key'}`;
}

/** `description` → `t.description`: a table's SQL expressions, on the alias `t`. */
const onT = (expression: string) =>
  expression.replace(/\b(name|login|key|title|description|bio|body|company|location|owner_login)\b/g, 't.$1');

/** Tables of hundreds of rows: their names are also compared by trigrams with the whole query. */
const SMALL = new Set(['chapters', 'committees', 'events', 'projects', 'sponsors']);

/** The query as the name tiers compare it: folded (`n`), with each misspelt word corrected (`c`), and as LIKE text. */
interface QueryText {
  n: string;
  c: string;
}

const likeText = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** The candidates of one table with their score: `resource`, `rid` (the row's id), `score`. */
function candidates(
  t: SearchedTable,
  tsq: RawBuilder<unknown>,
  { n, c }: QueryText,
  fuzzy: boolean,
): RawBuilder<unknown> {
  const visible = t.visible ? sql.raw(`${t.visible} AND `) : sql``;
  const l = likeText(n);
  const cl = likeText(c);
  const handle = t.handle ? sql`OR lower(${sql.raw(`t.${t.handle}`)}) IN (${n}, ${c})` : sql``;
  const score = sql`(CASE
        WHEN t.search_name IN (${n}, ${c}, ${`owasp ${n}`}, ${`owasp ${c}`}) ${handle}
          OR lower(${sql.raw(onT(t.name))}) LIKE ${`%(${l})%`} THEN 8
        WHEN t.search_name LIKE ${`${l}%`} OR t.search_name LIKE ${`owasp ${l}%`}
          OR t.search_name LIKE ${`${cl}%`} OR t.search_name LIKE ${`owasp ${cl}%`} THEN 4
        WHEN ' ' || t.search_name LIKE ${`% ${l}%`} OR ' ' || t.search_name LIKE ${`% ${cl}%`} THEN 2
        ELSE 0 END)
      + 3 * word_similarity(${n}, t.search_name)
      + 2 * strict_word_similarity(${n}, t.search_name)
      + 2 * ts_rank(t.search_vector, ${tsq})
      + ${sql.lit(RESOURCE_WEIGHT[t.resource] ?? 0)}`;
  // The page's fields: a small table's all here; a large table's long text (a bio, a body) only for the page's rows
  // (lazyText), and an issue's path from its repository too (issuePath).
  const id = t.resource === 'issues' ? 't.number::text' : idOf(t);
  const repository = t.resource === 'issues' ? 't.repository_id' : 'NULL::bigint';
  const text = SMALL.has(t.resource) ? `left(${onT(t.text)}, 600)` : 'NULL::text';
  const match =
    fuzzy && SMALL.has(t.resource)
      ? sql`(t.search_vector @@ (${tsq}) OR t.search_name %> ${n})`
      : sql`t.search_vector @@ (${tsq})`;
  return sql`(SELECT ${sql.lit(t.resource)} AS resource, t.id AS rid, ${score} AS score,
      ${sql.raw(`${id} AS id, ${repository} AS repository, ${onT(t.name)} AS name, ${text} AS text`)}
    FROM ${sql.raw(t.table)} t WHERE ${visible}${match}
    LIMIT ${sql.lit(SMALL.has(t.resource) ? SMALL_CANDIDATES : CANDIDATES)})`;
}

/** The text of a large table's result, read for the page's rows only (SQL over `page`). */
function lazyText(tables: readonly SearchedTable[]): RawBuilder<unknown> {
  const large = tables.filter((t) => !SMALL.has(t.resource));
  if (large.length === 0) return sql`page.text`;
  const cases = large.map(
    (t) => `WHEN '${t.resource}' THEN (SELECT left(${onT(t.text)}, 600) FROM ${t.table} t WHERE t.id = page.rid)`,
  );
  return sql.raw(`COALESCE(page.text, CASE page.resource ${cases.join(' ')} END)`);
}

/** An issue's path: its repository's, then its number (SQL over `page`). */
const issuePath = sql.raw(`CASE WHEN page.resource = 'issues'
    THEN (SELECT r.owner_login || '/' || r.name FROM repositories r WHERE r.id = page.repository) || '/' || page.id
    ELSE page.id END`);

/**
 * The page of results of `text` in `resources` from `offset`, best first, each row with the number of candidates
 * (`total`: at most CANDIDATES a large table, SMALL_CANDIDATES a small one). Two statements: the query's words and
 * their known neighbours (prepare), then the ranking, whose search terms are constants the planner sees (their
 * selectivity chooses each table's plan). One scan a table; the candidates are ranked on their own columns, and a
 * large table's long text and an issue's repository are read for the page's rows only. pg_trgm's thresholds are the
 * session's (TRIGRAM_SETTINGS).
 */
export async function searchRecords(
  db: Db,
  text: string,
  resources: readonly string[],
  limit: number,
  offset: number,
): Promise<SearchRow[]> {
  const tables = SEARCHED.filter((t) => resources.includes(t.resource));
  const { n, terms } = await prepare(db, text, queryWords(text));
  // The query with each misspelt word replaced by its nearest known word: what the person meant, for the name tiers.
  const c = terms.some((term) => term.spellings.length > 1)
    ? terms.map((term) => (term.spellings[1] ?? term.spellings[0])!.word).join(' ')
    : n;
  const tsq = tsquery(terms);
  // The names' trigrams are compared with the query only when a word is neither known nor one edit from a known word.
  const fuzzy = terms.some((term) => term.unmatched);
  const found = sql.join(
    tables.map((t) => candidates(t, tsq, { n, c }, fuzzy)),
    sql` UNION ALL `,
  );
  const { rows } = await sql<SearchRow>`
    WITH page AS (
      SELECT *, count(*) OVER () AS total FROM (${found}) AS found
      ORDER BY score DESC, resource, rid LIMIT ${limit} OFFSET ${offset}
    )
    SELECT page.resource, ${issuePath} AS id, page.name, ${lazyText(tables)} AS text,
      round(page.score::numeric, 4)::float8 AS score, page.total::int AS total
    FROM page ORDER BY page.score DESC, page.resource, page.rid`.execute(db);
  return rows;
}
