// Seeking by the ordering key (keyset pagination), for deep pages and for the opaque `cursor` (issue 12).
// A position in a list is the key of its last row: the values of the ordering terms, tie-breaker last.
// "After this key" is written so that the index is entered at the key instead of being read from its start and
// filtered: one row comparison (`(created_at, updated_at, id) < ($1, $2, $3)`) where every term has one direction and
// no NULL, otherwise an OR of one branch per term with the first term also a bound (`created_at <= $1`).
import crypto from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { invalidParam } from '../../../errors.ts';
import { termSql, type OrderTerm } from './ordering.ts';
import { memoize } from '../../../memo.ts';
import { BoundedMap, bytesOf, memory, type Share } from '../../../memory-budget.ts';

/** The ordering values of one row, as json_build_array renders them (timestamps as ISO text). */
export type Key = (string | number | null)[];

/** Rows at exactly this value of a term. */
function equal(term: OrderTerm, value: Key[number]): RawBuilder<boolean> {
  return value === null ? sql<boolean>`${termSql(term)} is null` : sql<boolean>`${termSql(term)} = ${value}`;
}

/** Rows strictly after this value of a term: NULLs sort last ascending and first descending (PostgreSQL's default). */
function beyond(term: OrderTerm, value: Key[number]): RawBuilder<boolean> {
  const column = termSql(term);
  if (term.direction === 'asc') {
    if (value === null) return sql<boolean>`false`;
    return term.nullable
      ? sql<boolean>`(${column} > ${value} or ${column} is null)`
      : sql<boolean>`${column} > ${value}`;
  }
  return value === null ? sql<boolean>`${column} is not null` : sql<boolean>`${column} < ${value}`;
}

/** A range on the first term the index can start from; none where NULLs would make it wrong. */
function bound(term: OrderTerm, value: Key[number]): RawBuilder<boolean> | undefined {
  const column = termSql(term);
  if (term.direction === 'asc') {
    if (value === null) return sql<boolean>`${column} is null`;
    return term.nullable ? undefined : sql<boolean>`${column} >= ${value}`;
  }
  // Descending, NULLs come first: they are all before a key that is not NULL.
  return value === null ? undefined : sql<boolean>`${column} <= ${value}`;
}

/** The rows that come after `key` in the order of `terms`. */
export function after(terms: OrderTerm[], key: Key): RawBuilder<boolean> {
  // One direction and no NULL anywhere: a single row comparison, which the index of the ordering takes as its bound.
  const direction = terms[0]!.direction;
  if (terms.every((t) => t.direction === direction && !t.nullable && !t.expression) && key.every((v) => v !== null)) {
    const columns = sql.join(terms.map((t) => termSql(t)));
    const values = sql.join(key.map((v) => sql`${v}`));
    return sql<boolean>`(${columns}) ${sql.raw(direction === 'desc' ? '<' : '>')} (${values})`;
  }
  const branches = terms.map((term, i) =>
    sql.join([...terms.slice(0, i).map((t, j) => equal(t, key[j]!)), beyond(term, key[i]!)], sql` and `),
  );
  const any = sql<boolean>`(${sql.join(
    branches.map((b) => sql`(${b})`),
    sql` or `,
  )})`;
  const range = bound(terms[0]!, key[0]!);
  return range ? sql<boolean>`${range} and ${any}` : any;
}

/**
 * The ordering and the filter set of a list as a short fingerprint: a cursor is only valid for the list
 * (filters, path parameters, time window: `scope`, the list's count query) and the ordering it was made in.
 */
function fingerprint(terms: OrderTerm[], scope: string): string {
  const text = terms.map((t) => `${t.direction === 'desc' ? '-' : ''}${t.column}`).join(',');
  return digestOf(`${text}\u0000${scope}`);
}

/** Remembered: every full page of a list states a fingerprint (its next cursor), and a digest costs more than a lookup. */
const digestOf = memoize(1_000, (text) => crypto.createHash('sha256').update(text).digest('base64url').slice(0, 8));

export function encodeCursor(terms: OrderTerm[], key: Key, scope: string): string {
  return Buffer.from(JSON.stringify({ o: fingerprint(terms, scope), k: key })).toString('base64url');
}

const isValue = (v: unknown): v is Key[number] =>
  v === null ||
  (typeof v === 'number' && Number.isFinite(v)) ||
  (typeof v === 'string' && v.length <= 1000 && !v.includes('\u0000'));

/** The key a cursor holds, or a 400 when it is not one of this list's cursors with these filters in this ordering. */
export function decodeCursor(terms: OrderTerm[], cursor: string, scope: string): Key {
  const invalid = () =>
    invalidParam(
      'query',
      'cursor',
      'is not a cursor of this list with these filters in this ordering: use the one in the Link header',
    );
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { o, k } = (parsed ?? {}) as { o?: unknown; k?: unknown };
  if (o !== fingerprint(terms, scope) || !Array.isArray(k) || k.length !== terms.length || !k.every(isValue))
    throw invalid();
  // The tie-breaker (the id) is never NULL.
  if (k.at(-1) === null) throw invalid();
  return k;
}

/**
 * Rows between remembered page boundaries: one key every STEP rows of a list in one ordering. A page of 100 (or of
 * 10, 20, 25 or 50) starts exactly at one; any other starts fewer than STEP rows after one (issue 32, item 5).
 */
export const STEP = 100;

interface Entry {
  keys: Promise<Key[]>;
  tables: string[];
  /** Keys held, once computed (0 until then). */
  size: number;
}

/**
 * Remembered boundaries, by count query and ordering, dropped when a table they read changes; the least
 * recently used entry goes first beyond `max` entries, `maxKeys` keys in all (a million-row list holds 10,000) or the
 * bytes of the boundaries' share of the memory budget (all lists together, memory-budget.ts). A promise is kept, so
 * concurrent deep pages compute them once.
 */
export class BoundaryCache {
  private readonly entries: BoundedMap<Entry>;
  private pending: Promise<void> | undefined;
  private keys = 0;

  constructor(
    max = 200,
    private readonly maxKeys = 200_000,
    share: Share = memory.shares.boundaries,
  ) {
    this.entries = new BoundedMap(share, max, (entry) => (this.keys -= entry.size));
  }

  hold(reading: Promise<void>): void {
    const held: Promise<void> = reading.finally(() => {
      if (this.pending === held) this.pending = undefined;
    });
    this.pending = held;
  }

  async get(key: string, tables: string[], compute: () => Promise<Key[]>): Promise<Key[]> {
    if (this.pending) await this.pending;
    const entry = this.entries.get(key);
    if (entry) return entry.keys;
    const keys = compute();
    const created: Entry = { keys, tables, size: 0 };
    this.entries.set(key, created, bytesOf(tables));
    keys.then(
      (list) => {
        if (this.entries.peek(key) !== created) return;
        created.size = list.length;
        this.keys += list.length;
        this.entries.replace(key, created, bytesOf(tables) + bytesOf(list));
        this.trim(key);
      },
      // A failure is not remembered.
      () => this.entries.peek(key) === created && this.entries.delete(key),
    );
    return keys;
  }

  /** The least recently used entries out until the bound of keys holds (the newest one stays, whatever its size). */
  private trim(newest: string): void {
    for (const [key] of this.entries.entries()) {
      if (this.keys <= this.maxKeys) return;
      if (key !== newest) this.entries.delete(key);
    }
  }

  invalidate(changed: ReadonlySet<string>, versioned: ReadonlySet<string>): void {
    for (const [key, entry] of [...this.entries.entries()]) {
      if (entry.tables.length === 0 || entry.tables.some((t) => changed.has(t) || !versioned.has(t)))
        this.entries.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  /** Keys held in all (the bound's test). */
  get keyCount(): number {
    return this.keys;
  }

  get size(): number {
    return this.entries.size;
  }
}
