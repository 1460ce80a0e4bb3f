// One memory budget for everything the process remembers per distinct request (issue 41): the response cache, the
// totals and groups of the lists, the page boundaries, the MCP tool results and the small memos (statement names,
// normalized URLs, valid keys). Each has a share of CACHE_MEMORY_MB (default: a quarter of the V8 heap limit) and is
// bounded in bytes by it, whatever the number of its entries. Bytes are an estimate of the heap an entry costs: two
// bytes per character of its texts (V8 may store one, so this errs high), the length of a Buffer, 8 per number and
// ENTRY for the entry itself (its Map slot, its object, a promise). Bounded by entries alone, one key's 15 distinct
// `group_by` requests of 12 MB each took a 512 MB process down.
import v8 from 'node:v8';

export type CacheName = 'responses' | 'counts' | 'boundaries' | 'mcp' | 'memos';

/** Each cache's part of the budget: responses are what most requests are answered from. */
const SHARES: Readonly<Record<CacheName, number>> = {
  responses: 0.4,
  counts: 0.2,
  boundaries: 0.1,
  mcp: 0.2,
  memos: 0.1,
};

/** An entry's own cost beside its texts: its Map slot, its object and what it points to. */
export const ENTRY = 160;

/** A quarter of the heap: the rest is for the requests in flight (a page, a CSV, a dump being read) and the code. */
export function defaultCacheMemoryMb(): number {
  return Math.max(8, Math.floor(v8.getHeapStatistics().heap_size_limit / 4 / 2 ** 20));
}

/** The estimated heap cost of a value read from the database: texts, numbers, arrays and plain objects of them. */
export function bytesOf(value: unknown): number {
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (Buffer.isBuffer(value)) return 96 + value.length;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + 8 + bytesOf(item), 16);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).reduce((sum, [key, item]) => sum + 8 + bytesOf(key) + bytesOf(item), 32);
  return 8;
}

interface Held {
  bytes: number;
  drop(): void;
}

/**
 * One cache's part of the budget. A cache that keeps its own order (the response cache, the memos) adds to `used`
 * and keeps under `limit` itself; the others hold their entries here (BoundedMap), in one order of use for all the
 * lists' caches of a kind, so that the least recently used entry of any list goes first.
 */
export class Share {
  used = 0;
  limit = 0;
  private readonly order = new Set<Held>();
  /** The entry last added or used (the end of `order`): using it again leaves the order as it is. */
  private newest: Held | undefined;

  constructor(
    readonly name: CacheName,
    readonly fraction: number,
  ) {}

  /** An entry larger than this is not kept: it would push out many others. */
  get largest(): number {
    return this.limit / 4;
  }

  add(held: Held): void {
    this.order.add(held);
    this.newest = held;
    this.used += held.bytes;
    this.trim();
  }

  touch(held: Held): void {
    if (held === this.newest) return;
    this.order.delete(held);
    this.order.add(held);
    this.newest = held;
  }

  resize(held: Held, bytes: number): void {
    this.used += bytes - held.bytes;
    held.bytes = bytes;
    this.trim();
  }

  remove(held: Held): void {
    if (held === this.newest) this.newest = undefined;
    if (this.order.delete(held)) this.used -= held.bytes;
  }

  /** The least recently used entries out until the share holds. */
  trim(): void {
    while (this.used > this.limit && this.order.size > 0) this.order.values().next().value!.drop();
  }
}

class Slot<V> implements Held {
  constructor(
    private readonly map: BoundedMap<V>,
    readonly key: string,
    public value: V,
    public bytes: number,
  ) {}

  drop(): void {
    this.map.delete(this.key);
  }
}

/** A Map whose entries are counted against a share of the budget (and at most `maxEntries`), least recently used out. */
export class BoundedMap<V> {
  private readonly slots = new Map<string, Slot<V>>();
  /** The slot last set or read (the end of `slots`): reading it again leaves the order as it is. */
  private newest: Slot<V> | undefined;

  /** `dropped`: told of every value that leaves, whatever the reason (a bound, a delete, clear). */
  constructor(
    private readonly share: Share,
    private readonly maxEntries = Number.POSITIVE_INFINITY,
    private readonly dropped?: (value: V) => void,
  ) {}

  /** The value, now the most recently used. */
  get(key: string): V | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    if (slot !== this.newest) {
      this.slots.delete(key);
      this.slots.set(key, slot);
      this.newest = slot;
    }
    this.share.touch(slot);
    return slot.value;
  }

  /** The value, its place in the order unchanged. */
  peek(key: string): V | undefined {
    return this.slots.get(key)?.value;
  }

  has(key: string): boolean {
    return this.slots.has(key);
  }

  /** Keeps a value of `bytes` (beside its key); one larger than the share's `largest` is not kept. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    const slot = new Slot(this, key, value, bytes + 16 + 2 * key.length + ENTRY);
    if (slot.bytes > this.share.largest) return;
    this.slots.set(key, slot);
    this.newest = slot;
    this.share.add(slot);
    while (this.slots.size > this.maxEntries) this.slots.values().next().value!.drop();
  }

  /** Replaces a value (a promise that settled) with its new size, keeping its place. */
  replace(key: string, value: V, bytes: number): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    slot.value = value;
    const total = bytes + 16 + 2 * key.length + ENTRY;
    if (total > this.share.largest) this.delete(key);
    else this.share.resize(slot, total);
  }

  delete(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    if (slot === this.newest) this.newest = undefined;
    this.slots.delete(key);
    this.share.remove(slot);
    this.dropped?.(slot.value);
  }

  clear(): void {
    for (const key of [...this.slots.keys()]) this.delete(key);
  }

  *entries(): IterableIterator<[string, V]> {
    for (const [key, slot] of this.slots) yield [key, slot.value];
  }

  get size(): number {
    return this.slots.size;
  }
}

/** The process's budget: one per process, since the memos are the modules' own. Sized at start (configure). */
export class MemoryBudget {
  readonly shares: Readonly<Record<CacheName, Share>>;
  private bytes = 0;

  constructor(bytes: number) {
    const shares = {} as Record<CacheName, Share>;
    for (const [name, fraction] of Object.entries(SHARES))
      shares[name as CacheName] = new Share(name as CacheName, fraction);
    this.shares = shares;
    this.configure(bytes);
  }

  /** Sets the total (CACHE_MEMORY_MB) and each share of it; what is held beyond a smaller share goes at once. */
  configure(bytes: number): void {
    this.bytes = bytes;
    for (const share of Object.values(this.shares)) {
      share.limit = Math.floor(bytes * share.fraction);
      share.trim();
    }
  }

  get total(): number {
    return this.bytes;
  }

  /** Bytes held by all the caches (an estimate, see above). */
  get used(): number {
    return Object.values(this.shares).reduce((sum, share) => sum + share.used, 0);
  }
}

export const memory = new MemoryBudget(defaultCacheMemoryMb() * 2 ** 20);

/**
 * A Map of small remembered results (the memos' share), emptied at once when it holds `max` entries or its share is
 * full, and filled again by what is still in use: cheaper per call than an order of use.
 */
export class EmptiedMap<V> {
  private readonly map = new Map<string, V>();
  private bytes = 0;

  constructor(
    private readonly max: number,
    private readonly sizeOf: (key: string, value: V) => number = (key, value) => ENTRY + bytesOf(key) + bytesOf(value),
    private readonly share: Share = memory.shares.memos,
  ) {}

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    this.delete(key);
    const bytes = this.sizeOf(key, value);
    if (this.map.size >= this.max || this.share.used + bytes > this.share.limit) this.clear();
    this.map.set(key, value);
    this.account(bytes);
  }

  delete(key: string): void {
    const value = this.map.get(key);
    if (value === undefined) return;
    this.map.delete(key);
    this.account(-this.sizeOf(key, value));
  }

  clear(): void {
    this.map.clear();
    this.account(-this.bytes);
  }

  get size(): number {
    return this.map.size;
  }

  private account(bytes: number): void {
    this.bytes += bytes;
    this.share.used += bytes;
  }
}
