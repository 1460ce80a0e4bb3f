// A clock for the syncs whose time moves only when someone sleeps: a sleep returns at once (on the next turn
// of the event loop) with the time moved to its deadline. Tests see every wait, to the millisecond, and never
// wait for it. Concurrent sleepers each move the time to their own deadline, never back.
import type { SyncClock } from '../src/data/github/github.gate.ts';

export interface FakeClock extends SyncClock {
  /** Every sleep asked for, in milliseconds, in order. */
  readonly sleeps: number[];
  advance(ms: number): void;
}

export function fakeClock(start = Date.UTC(2026, 0, 1, 12)): FakeClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      const deadline = now + ms;
      sleeps.push(ms);
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      now = Math.max(now, deadline);
    },
  };
}
