// Conditions to SQL. Every value travels as a bound parameter; the only SQL text written here is
// fixed fragments (operators, casts, wildcards) and column names from the maps below.
import { sql, type Expression, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { Condition, Operator, SearchField, SearchResource } from './filter.fields.ts';

/** Public field name → `table.column`, or an expression computed from the row. */
export type ColumnMap<F extends string> = Readonly<Record<F, string | RawBuilder<unknown>>>;

type ColumnOf<T extends keyof DB> = `${T}.${keyof DB[T] & string}`;

export const SEARCH_COLUMNS = {
  repositories: {
    name: 'repositories.name',
    language: 'repositories.language',
    stars: 'repositories.stars_count',
    forks: 'repositories.forks_count',
    contributors: 'repositories.contributors_count',
    archived: 'repositories.is_archived',
    created_at: 'repositories.created_at',
    updated_at: 'repositories.updated_at',
  },
  projects: {
    name: 'projects.name',
    level: 'projects.level',
    // The reference's project stars: the largest count among its repositories that are not forks
    // (owasp_aggregate_projects). Null without a stored repository, so no numeric condition matches.
    stars: sql`(SELECT max(r.stars_count) FROM repositories r
      WHERE (lower(r.owner_login), lower(r.name)) IN (
        SELECT split_part(p.path, '/', 1), split_part(p.path, '/', 2) FROM jsonb_array_elements_text(projects.repository_paths) AS p (path))
      AND NOT r.is_fork)`,
    created_at: 'projects.created_at',
    updated_at: 'projects.updated_at',
  },
  chapters: {
    name: 'chapters.name',
    country: 'chapters.country',
    region: 'chapters.region',
  },
} as const satisfies { [R in SearchResource]: Record<SearchField<R>, ColumnOf<R> | RawBuilder<unknown>> };

const COMPARE = {
  '=': sql`=`,
  '>': sql`>`,
  '<': sql`<`,
  '>=': sql`>=`,
  '<=': sql`<=`,
} as const satisfies Record<Operator, RawBuilder<unknown>>;

/** `%`, `_` and the escape character itself match literally (the pattern says `ESCAPE '\'`). */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, '\\$&');
}

function dateCondition(column: Expression<unknown>, op: Operator, from: Date): RawBuilder<SqlBool> {
  // An ISO string with `Z`, cast in SQL, so the process's and the session's time zones never matter;
  // the day's end is computed by PostgreSQL, which also copes with 9999-12-31.
  const start = sql`${from.toISOString()}::timestamptz`;
  const end = sql`(${start} + interval '1 day')`;
  switch (op) {
    case '=':
      return sql<SqlBool>`(${column} >= ${start} and ${column} < ${end})`;
    case '>':
      return sql<SqlBool>`${column} >= ${end}`;
    case '>=':
      return sql<SqlBool>`${column} >= ${start}`;
    case '<':
      return sql<SqlBool>`${column} < ${start}`;
    case '<=':
      return sql<SqlBool>`${column} < ${end}`;
  }
}

function toExpression(condition: Condition, columnName: string | RawBuilder<unknown>): RawBuilder<SqlBool> {
  const column = typeof columnName === 'string' ? sql.ref(columnName) : columnName;
  switch (condition.kind) {
    case 'string':
      // Exact is plain `=`: case-sensitive, as the reference implementation does it. A substring ignores
      // case and accents on both sides ("Bogota" finds "Bogotá"); the trigram indexes (migration 0007) are
      // built on the same cds_unaccent(column) expression, so the planner can use them.
      return condition.exact
        ? sql<SqlBool>`${column} = ${condition.value}`
        : sql<SqlBool>`cds_unaccent(${column}) ilike cds_unaccent('%' || ${escapeLike(condition.value)}::text || '%') escape '\\'`;
    case 'number':
      // bigint: a value beyond the column's integer range must compare, not fail the cast.
      return sql<SqlBool>`${column} ${COMPARE[condition.op]} ${condition.value}::bigint`;
    case 'boolean':
      return sql<SqlBool>`${column} = ${condition.value}`;
    case 'date':
      return dateCondition(column, condition.op, condition.from);
  }
}

/** Adds one `where` per condition (so they are ANDed) to a select over the table of `columns`. */
export function applySearch<D, TB extends keyof D, O, F extends string>(
  qb: SelectQueryBuilder<D, TB, O>,
  conditions: readonly Condition<F>[],
  columns: ColumnMap<F>,
): SelectQueryBuilder<D, TB, O> {
  let query = qb;
  for (const condition of conditions) query = query.where(toExpression(condition, columns[condition.field]));
  return query;
}
