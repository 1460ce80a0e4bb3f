// What the brute-force guard asks about a key once an address is over its limit of wrong keys:
// could it be valid? The answer comes from memory (the first 16 hex digits of the digest of every
// valid key), so wrong keys beyond the limit never reach the database one by one, while a valid key
// is still served whoever else shares its address. The list is loaded only while some address is
// over the limit, at most once a second, and a key it does not hold waits for a load that started
// after the request arrived, so a key created a moment ago on another instance is found too.
import { listValidDigestPrefixes } from '../api-keys/api-keys.queries.ts';
import { sha256Hex } from '../api-keys/api-keys.format.ts';
import type { Db } from '../db/index.ts';

const PREFIX_LENGTH = 16;

/** The monotonic time in milliseconds and a way to wait: the real ones in service, a fake in tests. */
export interface Timers {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_TIMERS: Timers = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
};

interface Load {
  startedAt: number;
  done: Promise<void>;
}

export class KnownKeys {
  private prefixes = new Set<string>();
  private current: Load | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    /** The app's time in epoch milliseconds, on which keys expire (not the monotonic time of `timers`). */
    private readonly clock: () => number = Date.now,
    private readonly timers: Timers = REAL_TIMERS,
    private readonly minIntervalMs = 1_000,
  ) {}

  /** False only when no valid key has this key's digest prefix (a true answer is then checked in full). */
  async mayBeValid(raw: string, arrivedAt = this.timers.now()): Promise<boolean> {
    const prefix = sha256Hex(raw).slice(0, PREFIX_LENGTH);
    if (this.prefixes.has(prefix)) return true;
    await this.loadedSince(arrivedAt);
    return this.prefixes.has(prefix);
  }

  private loadedSince(arrivedAt: number): Promise<void> {
    if (this.current && this.current.startedAt >= arrivedAt) return this.current.done;
    // One waiting load serves every request that arrives before it starts.
    this.next ??= this.scheduleNext();
    return this.next;
  }

  private async scheduleNext(): Promise<void> {
    const previous = this.current;
    await previous?.done.catch(() => {});
    const wait = previous ? previous.startedAt + this.minIntervalMs - this.timers.now() : 0;
    if (wait > 0) await this.timers.sleep(wait);
    const startedAt = this.timers.now();
    this.next = undefined;
    const done = listValidDigestPrefixes(this.db, PREFIX_LENGTH, new Date(this.clock())).then((prefixes) => {
      this.prefixes = new Set(prefixes);
    });
    this.current = { startedAt, done };
    return done;
  }
}
