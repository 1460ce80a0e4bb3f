// What the rest of the service sees of the embedded database's worker (embedded/pglite-supervisor.ts keeps it
// running): its state and events, and how its restarts are paced. Here, beside database.ts, so that what an open
// database is does not reach into either engine's folder.
import type { EventEmitter } from 'node:events';

/** The clock and timer of the backoff (tests inject their own, so nothing waits on wall time). */
export interface RestartClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RestartOptions {
  clock?: RestartClock;
  /** First delay before a restart; it doubles for each further attempt up to maxDelayMs. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A worker that ran this long before dying resets the backoff to minDelayMs. */
  stableMs?: number;
  /** After this many restarts in a row that could not open the database, the state is `failed` (still retried). */
  maxFailedStarts?: number;
}

/**
 * `running`: a worker answers. `restarting`: it died, a new one is due or opening. `failed`: it cannot come back by
 * itself (in memory), or it failed to open maxFailedStarts times in a row (retries go on at maxDelayMs).
 */
export type EmbeddedState = 'running' | 'restarting' | 'failed' | 'closed';

export interface EmbeddedEvents {
  /** The worker died. `restartInMs` is absent when it will not be restarted (in memory). */
  crashed: [{ reason: string; restartInMs?: number }];
  /** A new worker opened the database. `attempt` counts the attempts since the crash (1 = the first). */
  restarted: [{ attempt: number }];
  /** A new worker could not open the database; the next attempt is in restartInMs. */
  'restart-failed': [{ attempt: number; reason: string; restartInMs: number; state: EmbeddedState }];
}

/** What the rest of the service sees of the embedded database's worker: its state, and events for logs and metrics. */
export interface EmbeddedHealth extends EventEmitter<EmbeddedEvents> {
  readonly state: EmbeddedState;
  /** Workers started after a crash, since the database was opened. */
  readonly restarts: number;
}
