// What the syncs report while they run: warnings (retries, rate limits) and progress on a terminal.

export interface SyncLog {
  info(message: string): void;
  warn(message: string): void;
}

export const QUIET_LOG: SyncLog = { info: () => {}, warn: () => {} };

/** Progress of a run: a bar on a terminal (cli/progress.ts), nothing elsewhere. */
export interface SyncProgress {
  start(total: number, what: string): void;
  /** One more unit done; `detail` is shown next to the count. */
  advance(detail: string): void;
  stop(): void;
}

export const NO_PROGRESS: SyncProgress = { start: () => {}, advance: () => {}, stop: () => {} };
