// Exact totals of the lists, cached by count query and dropped per table (issue 12, docs/counts.md).
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../../db/index.ts';
import { readTableVersions } from '../../../db/table-versions.queries.ts';

interface Entry<T> {
  total: Promise<T>;
  tables: string[];
  recount?: () => Promise<T>;
}

/** How many invalidated totals are counted again at once, most recently used first; the others are dropped. */
const RECOUNT = 50;

/**
 * Totals (or groups of totals, `group_by`) by compiled count query. Least recently used first out beyond `max` keys. When tables
 * change, the totals that read them are counted again in the background (the most recently used
 * RECOUNT of them, one after the other) or dropped; a request in between waits for the new count, so a
 * total is never stale. Totals of other tables stay.
 */
export class CountCache<T = number> {
  private totals = new Map<string, Entry<T>>();
  private pending: Promise<void> | undefined;

  constructor(private readonly max = 10_000) {}

  /** The total of a count query: cached, or counted now (and remembered with the tables it reads). */
  async total(key: string, tables: string[], count: () => Promise<T>): Promise<T> {
    // While the changed tables are being read, nothing cached can be trusted yet.
    if (this.pending) await this.pending;
    const entry = this.totals.get(key);
    if (entry) {
      this.totals.delete(key);
      this.totals.set(key, entry);
      return entry.total;
    }
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
    this.totals.delete(key);
    this.totals.set(key, { total, tables, ...(recount ? { recount } : {}) });
    total.catch(() => this.totals.get(key)?.total === total && this.totals.delete(key));
    while (this.totals.size > this.max) this.totals.delete(this.totals.keys().next().value!);
  }

  /** Drops (or counts again) the totals that read a changed table, or any table that is not versioned. */
  invalidate(changed: ReadonlySet<string>, versioned: ReadonlySet<string>): void {
    const stale = [...this.totals].filter(
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
      this.totals.set(key, { ...entry, total });
      total.catch(() => this.totals.get(key)?.total === total && this.totals.delete(key));
    });
  }

  clear(): void {
    this.totals.clear();
  }

  get size(): number {
    return this.totals.size;
  }
}

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

const byApp = new WeakMap<FastifyInstance, TableVersions>();

/** Registers a cache of a list route with the app's table versions (read on every data version change). */
export function onTablesChange(app: FastifyInstance, listener: TableListener): void {
  let versions = byApp.get(app);
  if (!versions) {
    const created = new TableVersions(app.database.db);
    versions = created;
    byApp.set(app, created);
    app.shared.watcher.onChange(() => created.changed());
  }
  versions.listen(listener);
}
