// `ordering`: one allowed value or several separated by commas, `-` for descending.
// Every ordering ends with the primary key so that pages never overlap or skip records.
import { sql, type RawBuilder } from 'kysely';
import { invalidParam } from '../../../errors.ts';

export interface OrderTerm {
  /** The SQL column; or, with `expression`, the term's name (it marks cursors and remembered boundaries). */
  column: string;
  /** An expression to sort by instead of the column (the distance of `near`, near.ts). */
  expression?: RawBuilder<unknown>;
  /**
   * An index gives the rows in the order of this term alone (a GiST distance), but not of the terms after it: the page
   * is read in this term's order, with the rows tied with its last one, then sorted by every term (pagination.ts).
   */
  indexOrdered?: boolean;
  direction: 'asc' | 'desc';
  /** The column may hold NULL (seeking past a key must then keep the NULLs, see keyset.ts). */
  nullable?: boolean;
}

export interface OrderingSpec {
  /** Public ordering names mapped to the SQL column they sort by. */
  fields: Record<string, string>;
  /** The default, written as the public parameter would be (`-created_at,-updated_at`). */
  default: string;
  /** The primary-key column used as the tie-breaker. */
  tieBreaker: string;
  /** Public names whose column may be NULL. */
  nullable?: string[];
  /**
   * Terms that follow a public name before the tie-breaker, ascending whatever its direction: a rank whose ties read
   * best by name (`health_score`, then the project's key).
   */
  then?: Record<string, string>;
}

export function allowedOrderings(spec: OrderingSpec): string[] {
  return Object.keys(spec.fields).flatMap((name) => [name, `-${name}`]);
}

export function parseOrdering(spec: OrderingSpec, value: string | undefined): OrderTerm[] {
  const terms: OrderTerm[] = [];
  const seen = new Set<string>();
  for (const part of (value ?? spec.default).split(',')) {
    const token = part.trim();
    const name = token.startsWith('-') ? token.slice(1) : token;
    const column = Object.hasOwn(spec.fields, name) ? spec.fields[name] : undefined;
    if (!column || seen.has(name)) {
      throw invalidParam(
        'query',
        'ordering',
        `must be one or more of: ${allowedOrderings(spec).join(', ')} (comma-separated, no repeats)`,
      );
    }
    seen.add(name);
    const nullable = spec.nullable?.includes(name) ? { nullable: true } : {};
    terms.push({ column, direction: token.startsWith('-') ? 'desc' : 'asc', ...nullable });
    const then = spec.then?.[name];
    if (then !== undefined) terms.push({ column: then, direction: 'asc' });
  }
  // The tie-breaker follows the direction of the last term, so that a reversed ordering is the exact reverse.
  terms.push({ column: spec.tieBreaker, direction: terms.at(-1)?.direction ?? 'asc' });
  return terms;
}

/** The SQL a term sorts by: its column, or its expression. */
export function termSql(term: OrderTerm): RawBuilder<unknown> {
  return term.expression ?? sql`${sql.ref(term.column)}`;
}
