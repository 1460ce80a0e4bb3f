// Exact totals of the lists, cached by count query and dropped per table (issue 12, docs/counts.md).
import type { FastifyInstance } from 'fastify';
import type { DataVersionWatcher } from '../../../announcements/data-version.ts';
import type { Db } from '../../../db/index.ts';
import { readTableVersions } from '../../../db/table-versions.queries.ts';
import { BoundedMap, memory, type Share } from '../../../memory-budget.ts';

interface Entry<T> {
  total: Promise<T>;
  tables: string[];
  recount?: () => Promise<T>;
}

/** How many invalidated totals are counted again at once, most recently used first; the others are dropped. */
const RECOUNT = 50;

/**
 * Totals (or groups of totals, `group_by`) by compiled count query. Least recently used first out beyond `max` keys
 * or the bytes of the counts' share of the memory budget (all lists together, memory-budget.ts). When tables
 * change, the totals that read them are counted again in the background (the most recently used
 * RECOUNT of them, one after the other) or dropped; a request in between waits for the new count, so a
 * total is never stale. Totals of other tables stay.
 */
export class CountCache<T = number> {
  private readonly totals: BoundedMap<Entry<T>>;
  private pending: Promise<void> | undefined;

  /** `sizeOf`: the bytes of a settled total (a number's by default). */
  constructor(
    max = 10_000,
    private readonly sizeOf: (total: T) => number = () => 8,
    share: Share = memory.shares.counts,
  ) {
    this.totals = new BoundedMap(share, max);
  }

  /** The total of a count query: cached, or counted now (and remembered with the tables it reads). */
  async total(key: string, tables: string[], count: () => Promise<T>): Promise<T> {
    // While the changed tables are being read, nothing cached can be trusted yet.
    if (this.pending) await this.pending;
    const entry = this.totals.get(key);
    if (entry) return entry.total;
    const total = count();
    this.set(key, total, tables, count);
    return total;
  }

  /** Holds every lookup until `reading` (of the changed tables) is done. */
  hold(reading: Promise<void>): void {
    const held: Promise<void> = reading.finally(() => {
      if (this.pending === held) this.pending = undefined;
    });
    this.pending = held;
  }

  has(key: string): boolean {
    return this.totals.has(key);
  }

  /** Remembers a total being counted; a failed count is forgotten. */
  set(key: string, total: Promise<T>, tables: string[] = [], recount?: () => Promise<T>): void {
    const entry: Entry<T> = { total, tables, ...(recount ? { recount } : {}) };
    this.totals.set(key, entry, bytesOfTables(tables));
    this.settle(key, entry);
  }

  /** Sizes a total once counted; a failed count is forgotten. */
  private settle(key: string, entry: Entry<T>): void {
    entry.total.then(
      (value) =>
        this.totals.peek(key) === entry &&
        this.totals.replace(key, entry, bytesOfTables(entry.tables) + this.sizeOf(value)),
      () => this.totals.peek(key) === entry && this.totals.delete(key),
    );
  }

  /** Drops (or counts again) the totals that read a changed table, or any table that is not versioned. */
  invalidate(changed: ReadonlySet<string>, versioned: ReadonlySet<string>): void {
    const stale = [...this.totals.entries()].filter(
      ([, e]) => e.tables.length === 0 || e.tables.some((t) => changed.has(t) || !versioned.has(t)),
    );
    let chain = Promise.resolve();
    stale.reverse().forEach(([key, entry], i) => {
      if (!entry.recount || i >= RECOUNT) {
        this.totals.delete(key);
        return;
      }
      const recount = entry.recount;
      const total = chain.then(() => recount());
      chain = total.then(
        () => undefined,
        () => undefined,
      );
      const next = { ...entry, total };
      this.totals.replace(key, next, bytesOfTables(entry.tables));
      this.settle(key, next);
    });
  }

  clear(): void {
    this.totals.clear();
  }

  get size(): number {
    return this.totals.size;
  }
}

const bytesOfTables = (tables: string[]) => tables.reduce((sum, t) => sum + 24 + 2 * t.length, 16);

/** Caches that hold what was read from tables: told which tables changed. */
export interface TableListener {
  hold(reading: Promise<void>): void;
  invalidate(changed: ReadonlySet<string>, versioned: ReadonlySet<string>): void;
  clear(): void;
}

/**
 * The versions of the tables, read again when the data version moves: the tables whose version
 * changed are given to every listener. When they cannot be read, every listener is cleared.
 */
class TableVersions {
  private versions: Map<string, number> | undefined;
  private listeners: TableListener[] = [];
  private reading = Promise.resolve();

  constructor(private readonly db: Db) {}

  listen(listener: TableListener): void {
    this.listeners.push(listener);
  }

  changed(): void {
    const reading = this.reading.then(() => this.read());
    this.reading = reading;
    for (const listener of this.listeners) listener.hold(reading);
  }

  private async read(): Promise<void> {
    let next: Map<string, number>;
    try {
      next = await readTableVersions(this.db);
    } catch {
      this.versions = undefined;
      for (const listener of this.listeners) listener.clear();
      return;
    }
    const previous = this.versions;
    this.versions = next;
    // The first reading has nothing to compare with: what is cached may predate it.
    if (!previous) {
      for (const listener of this.listeners) listener.clear();
      return;
    }
    const changed = new Set(
      [...next].filter(([name, version]) => previous.get(name) !== version).map(([name]) => name),
    );
    const versioned = new Set(next.keys());
    for (const listener of this.listeners) listener.invalidate(changed, versioned);
  }
}

/**
 * One reader per app (per its data version watcher), whatever the number of routes that listen. Each list route
 * registers from a plugin context of its own, a FastifyInstance of its own: keyed by that, a reader per route read the
 * versions at every change, all at once, a dozen connections of a serving pool of ten.
 */
const byWatcher = new WeakMap<DataVersionWatcher, TableVersions>();

/** Registers a cache of a list route with the app's table versions (read on every data version change). */
export function onTablesChange(app: FastifyInstance, listener: TableListener): void {
  const { watcher } = app.shared;
  let versions = byWatcher.get(watcher);
  if (!versions) {
    const created = new TableVersions(app.database.db);
    versions = created;
    byWatcher.set(watcher, created);
    watcher.onChange(() => created.changed());
  }
  versions.listen(listener);
}
