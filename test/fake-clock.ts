// A clock for the syncs whose time moves only when someone sleeps: a sleep returns at once (on the next turn
// of the event loop) with the time moved to its deadline. Tests see every wait, to the millisecond, and never
// wait for it. Concurrent sleepers each move the time to their own deadline, never back.
import type { SyncClock } from '../src/data/sync/github/github.gate.ts';

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

/**
 * Monotonic time for the brute-force guard's memory of known keys (src/access/known-keys.ts): every reading
 * is 1 ms after the one before, so what happened first reads earlier, as with a real clock; a sleep returns on the
 * next turn of the event loop with the time moved past its deadline. Its loads, at most one a second, then cost
 * no wall-clock time.
 */
export function tickingTimers(): { now(): number; sleep(ms: number): Promise<void>; readonly sleeps: number[] } {
  const clock = fakeClock(0);
  return {
    sleeps: clock.sleeps,
    now() {
      clock.advance(1);
      return clock.now();
    },
    sleep: (ms) => clock.sleep(ms),
  };
}
