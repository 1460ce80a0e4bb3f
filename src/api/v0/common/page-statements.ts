// The statements of a list page kept by their shape (issue 46): building and compiling the count and the page
// statement around the filtered rows cost about 45 µs of an uncached page, each time for the same texts with other
// values. A list's filtered query (its resource's filters applied) is still built and compiled for each request, which
// is cheap; its text, with what the page adds around it (the ordering, the item's columns, GeoJSON, whether the page
// starts after a key and which of the key's values are NULL), is the shape. Everything else that changes the text is
// in the filtered query's text (literals, identifiers, how many values an IN list has); values never are.
//
// A shape's statements are compiled once, with a unique stand-in object for each value of the page (its limit and
// offset, the values of the key it starts after), which tells where each parameter of the text comes from: a stand-in,
// or, in order, each parameter of the filtered query (the same nodes, compiled in the same order). A statement whose
// parameters cannot be read so (a filtered query that selects a parameter, which the count drops) is not kept: such a
// shape is built and compiled for each request, as before.
import { CompiledQuery } from 'kysely';
import type { OrderTerm } from './ordering.ts';
import type { Key } from './keyset.ts';
import { EmptiedMap } from '../../../memory-budget.ts';

/** Where a parameter of a kept statement comes from: ≥ 0 the filtered query's parameter of that index, else a slot. */
type Source = number;
const LIMIT: Source = -1;
const SKIP: Source = -2;
/** The key's value `i` (a page after a key): KEY - i. */
const KEY: Source = -3;

/** A statement of one shape: its text, and the source of each of its parameters. */
export interface Template {
  sql: string;
  sources: readonly Source[];
}

/** The shape could not be kept: built and compiled for each request. */
export const UNKEPT = 'unkept';

/** Stand-ins for a page's values while a shape's statement is compiled; never sent to the database. */
class StandIn {
  constructor(readonly source: Source) {}
}
export const LIMIT_STAND_IN = new StandIn(LIMIT) as unknown as number;
export const SKIP_STAND_IN = new StandIn(SKIP) as unknown as number;
const keyStandIns: StandIn[] = [];

/** The key to compile a shape with: a stand-in for each value, NULL where the key has NULL (which changes the text). */
export function keyStandIn(key: Key): Key {
  return key.map((value, i) => {
    if (value === null) return null;
    keyStandIns[i] ??= new StandIn(KEY - i);
    return keyStandIns[i] as unknown as string;
  });
}

/**
 * The template of `compiled`: each parameter a stand-in's slot or, in order, the next of the filtered query's
 * parameters; undefined when its parameters are not read so (one of the filtered query's left out or moved).
 */
export function templateOf(compiled: CompiledQuery, filtered: readonly unknown[]): Template | undefined {
  const sources: Source[] = [];
  let next = 0;
  for (const parameter of compiled.parameters) {
    if (parameter instanceof StandIn) {
      sources.push(parameter.source);
      continue;
    }
    if (next >= filtered.length || !Object.is(parameter, filtered[next])) return undefined;
    sources.push(next++);
  }
  return next === filtered.length ? { sql: compiled.sql, sources } : undefined;
}

/** A shape's statement with this request's values. */
export function instantiate(
  template: Template,
  filtered: readonly unknown[],
  page: { limit?: number; skip?: number; key?: Key },
): CompiledQuery {
  const values = template.sources.map((source) => {
    if (source >= 0) return filtered[source];
    if (source === LIMIT) return page.limit;
    if (source === SKIP) return page.skip;
    return page.key![KEY - source];
  });
  return CompiledQuery.raw(template.sql, values);
}

/** Templates by shape, at most `max` (then emptied, to fill again from the shapes in use) within the memos' share. */
export class StatementCache {
  private readonly templates: EmptiedMap<Template | typeof UNKEPT>;

  constructor(max = 500) {
    this.templates = new EmptiedMap(max);
  }

  /** The template of a shape, compiled (`compile`, with stand-ins) the first time. */
  get(shape: string, filtered: readonly unknown[], compile: () => CompiledQuery): Template | undefined {
    let template = this.templates.get(shape);
    if (template === undefined) {
      let compiled: CompiledQuery | undefined;
      try {
        compiled = compile();
      } catch {
        // Whatever refused the stand-ins: this shape is compiled per request, with its values, as before.
      }
      template = (compiled && templateOf(compiled, filtered)) ?? UNKEPT;
      this.templates.set(shape, template);
    }
    return template === UNKEPT ? undefined : template;
  }

  get size(): number {
    return this.templates.size;
  }
}

/** A number per object (an item's column, a list's GeoJSON columns), for shapes: the same object, the same text. */
const ids = new WeakMap<object, number>();
let lastId = 0;
export function idOf(object: object): number {
  let id = ids.get(object);
  if (id === undefined) {
    id = ++lastId;
    ids.set(object, id);
  }
  return id;
}

/** The part of a shape the ordering makes; undefined when a term sorts by an expression (`near`: it holds values). */
export function orderShape(order: readonly OrderTerm[]): string | undefined {
  let text = '';
  for (const term of order) {
    if (term.expression || term.indexOrdered) return undefined;
    text += `${term.column} ${term.direction}${term.nullable ? ' n' : ''},`;
  }
  return text;
}

/** Which of a key's values are NULL (the text of "after this key" depends on it). */
export function nullsOf(key: Key): string {
  let text = '';
  for (const value of key) text += value === null ? '0' : '1';
  return text;
}
