// Counts of failed attempts per client address in a fixed amount of memory, whatever the number of addresses: a
// count-min sketch (ROWS rows of WIDTH counters; an address adds one to a counter of each row, and its count is the
// least of them). Addresses that share counters only add to each other's counts, so a count is never below the true
// one: memory cannot be exhausted by distinct addresses, and no address's count can be pushed out of memory to
// unlock it (what a map that drops its oldest entries would allow). The price: a flood of distinct addresses raises
// every count a little (with 2^16 counters a row, ~500,000 addresses in a minute add ~8), and only wrong keys are
// refused past the limit (a valid key is always served, known-keys.ts).
import type { Hit } from './rate-limit.ts';

const ROWS = 4;
const WIDTH = 1 << 16;

export class CountSketch {
  private readonly cells = new Uint32Array(ROWS * WIDTH);
  private window = Number.NaN;
  private readonly slots = new Uint32Array(ROWS);

  /** Counts one attempt of `key` in the fixed window of `windowMs` that holds `now`; synchronous. */
  hit(key: string, windowMs: number, now: number): Hit {
    const window = Math.floor(now / windowMs);
    if (window !== this.window) {
      this.cells.fill(0);
      this.window = window;
    }
    this.locate(key);
    let count = Number.MAX_SAFE_INTEGER;
    for (const slot of this.slots) {
      const value = this.cells[slot]! + 1;
      this.cells[slot] = value;
      if (value < count) count = value;
    }
    return { count, resetMs: (window + 1) * windowMs - now };
  }

  /** Takes back an attempt counted in the current window (a valid key is no failure). */
  undo(key: string, windowMs: number, now: number): void {
    if (Math.floor(now / windowMs) !== this.window) return;
    this.locate(key);
    for (const slot of this.slots) if (this.cells[slot]! > 0) this.cells[slot]!--;
  }

  /** The counter of each row for `key`: two 32-bit FNV-1a hashes combined (h1 + i·h2), one counter a row. */
  private locate(key: string): void {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193 ^ key.length;
    for (let i = 0; i < key.length; i++) {
      const code = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ code, 0x01000193);
      h2 = Math.imul(h2 ^ code, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    h2 |= 1;
    for (let row = 0; row < ROWS; row++) this.slots[row] = row * WIDTH + (((h1 + row * h2) >>> 0) % WIDTH);
  }
}
