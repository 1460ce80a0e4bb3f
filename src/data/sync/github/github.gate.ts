// The one door every GitHub request of a sync goes through: how many are in flight, how fast they leave,
// and the pauses GitHub asks for. A pause (secondary limit, spent hourly budget) holds every worker: no
// request leaves until it ends. Time comes from an injected clock, so tests never wait in wall-clock time.
import { setTimeout as sleep } from 'node:timers/promises';

export interface SyncClock {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const SYSTEM_CLOCK: SyncClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal ? { signal } : undefined),
};

/** Stops the run: GitHub's budget cannot be waited for within the limit, or the run's own budget is spent. */
export class RateLimitStop extends Error {
  // octokit passes an AbortError through untouched (its retry plugin retries any other fetch failure).
  override name = 'AbortError';
  readonly rateLimitStop = true;
}

export interface GateOptions {
  clock: SyncClock;
  /** Requests in flight at once. */
  concurrency: number;
  /** Requests leaving per minute at most (0: no pacing). */
  perMinute: number;
  signal?: AbortSignal | undefined;
}

export class RequestGate {
  private inFlight = 0;
  private nextStart = 0;
  private pausedUntil = 0;
  private stop: RateLimitStop | undefined;
  private waiters: (() => void)[] = [];
  /** Milliseconds spent paused (rate limits), for the report. */
  pausedMs = 0;

  constructor(private readonly options: GateOptions) {}

  /** Waits until a request may leave; `release` must follow. */
  async acquire(): Promise<void> {
    const { clock, signal } = this.options;
    for (;;) {
      signal?.throwIfAborted();
      if (this.stop) throw this.stop;
      const now = clock.now();
      if (now < this.pausedUntil) {
        const wait = this.pausedUntil - now;
        await clock.sleep(wait, signal);
        this.pausedMs += Math.max(0, Math.min(wait, clock.now() - now));
        continue;
      }
      if (this.inFlight >= this.options.concurrency) {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
        continue;
      }
      if (now < this.nextStart) {
        await clock.sleep(this.nextStart - now, signal);
        continue;
      }
      this.inFlight++;
      this.nextStart = now + (this.options.perMinute > 0 ? Math.ceil(60_000 / this.options.perMinute) : 0);
      return;
    }
  }

  release(): void {
    this.inFlight--;
    this.waiters.shift()?.();
  }

  /** No request leaves before `until` (ms since the epoch). */
  pause(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
  }

  /** Every waiting and later request fails with `error`. */
  halt(error: RateLimitStop): void {
    this.stop ??= error;
    for (const wake of this.waiters.splice(0)) wake();
  }

  get halted(): RateLimitStop | undefined {
    return this.stop;
  }
}
