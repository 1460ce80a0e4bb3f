// Keeps the embedded database's worker running: when it dies (a WASM abort, an out-of-memory, an exception out
// of PGlite), a new worker opens the same data folder after a backoff, and PostgreSQL's crash recovery replays
// the WAL, so what was committed before the crash is there again. The data folder's lock is the process's and
// stays held throughout. While no worker runs, a new connection fails at once (ECONNRESET, a 503), so a request
// never waits for a restart that may take seconds or never succeed.
//
// An in-memory database (`memory://`, or one loaded from a tarball: the tests' templates) is not restarted: a new
// one would be empty (or back at its tarball), and a server answering 404 for everything it had is worse than one
// that says it is broken. It stays `failed`, and /livez answers 503 so that a process manager restarts the process.
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { PgliteWorker, type WorkerStart } from './pglite-host.ts';
import type {
  EmbeddedEvents,
  EmbeddedHealth,
  EmbeddedState,
  RestartClock,
  RestartOptions,
} from '../embedded-health.ts';

const realClock: RestartClock = {
  now: () => performance.now(),
  setTimeout(run, ms) {
    // Not holding the process alive by itself: a server is held by its listener, a script by its own work.
    return setTimeout(run, ms).unref();
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class PgliteSupervisor extends EventEmitter<EmbeddedEvents> implements EmbeddedHealth {
  readonly #start: WorkerStart;
  readonly #recoverable: boolean;
  readonly #clock: RestartClock;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #stableMs: number;
  readonly #maxFailedStarts: number;
  #current: PgliteWorker;
  #state: EmbeddedState = 'running';
  #startedAt: number;
  /** Attempts since the backoff was last reset: the next delay is minDelayMs × 2^attempts. */
  #attempts = 0;
  /** Attempts since the crash (for the events). */
  #sinceCrash = 0;
  #failedStarts = 0;
  #restarts = 0;
  #timer: unknown;
  #opening: Promise<void> | undefined;

  private constructor(start: WorkerStart, first: PgliteWorker, options: RestartOptions) {
    super();
    this.#start = start;
    this.#recoverable = !start.dataDir.startsWith('memory://') && !start.loadDataDir;
    this.#clock = options.clock ?? realClock;
    this.#minDelayMs = options.minDelayMs ?? 500;
    this.#maxDelayMs = options.maxDelayMs ?? 30_000;
    this.#stableMs = options.stableMs ?? 60_000;
    this.#maxFailedStarts = options.maxFailedStarts ?? 5;
    this.#current = first;
    this.#startedAt = this.#clock.now();
    this.#watch(first);
  }

  /** Starts the first worker; rejects, as PgliteWorker.start does, when the database cannot open. */
  static async open(start: WorkerStart, options: RestartOptions = {}): Promise<PgliteSupervisor> {
    const first = await PgliteWorker.start(start);
    // Kept as it is: a tarball (a Blob, shared with its owner, not copied) marks a database that is never restarted.
    return new PgliteSupervisor(start, first, options);
  }

  get state(): EmbeddedState {
    return this.#state;
  }

  get restarts(): number {
    return this.#restarts;
  }

  /** The worker now in place (fault tests crash it). */
  get current(): PgliteWorker {
    return this.#current;
  }

  /** node-postgres's stream: to the worker in place; while none runs, it fails at connect (ECONNRESET). */
  socket(): Duplex {
    return this.#current.socket();
  }

  dumpDataDir(): Promise<Blob> {
    return this.#current.dumpDataDir();
  }

  /** Stops restarting, waits for a worker being opened, closes the one in place. */
  async close(): Promise<void> {
    this.#state = 'closed';
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#opening;
    await this.#current.close();
  }

  /** (A method, not a comparison: TypeScript would keep the state it narrowed before an await.) */
  #isClosed(): boolean {
    return this.#state === 'closed';
  }

  #watch(worker: PgliteWorker): void {
    void worker.exited.then((reason) => {
      if (this.#state === 'closed' || worker !== this.#current) return;
      if (!this.#recoverable) {
        this.#state = 'failed';
        this.emit('crashed', { reason });
        return;
      }
      if (this.#clock.now() - this.#startedAt >= this.#stableMs) this.#attempts = 0;
      this.#sinceCrash = 0;
      this.#state = 'restarting';
      this.emit('crashed', { reason, restartInMs: this.#schedule() });
    });
  }

  /** Schedules the next attempt; returns its delay. */
  #schedule(): number {
    const delay = Math.min(this.#minDelayMs * 2 ** this.#attempts, this.#maxDelayMs);
    this.#attempts++;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#opening = this.#restart();
    }, delay);
    return delay;
  }

  async #restart(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#sinceCrash++;
    const attempt = this.#sinceCrash;
    let worker: PgliteWorker;
    try {
      // What the first worker started from: only a data folder (no tarball) is ever restarted.
      worker = await PgliteWorker.start(this.#start);
    } catch (error) {
      if (this.#isClosed()) return;
      this.#failedStarts++;
      if (this.#failedStarts >= this.#maxFailedStarts) this.#state = 'failed';
      this.emit('restart-failed', {
        attempt,
        reason: (error as Error).message,
        restartInMs: this.#schedule(),
        state: this.#state,
      });
      return;
    }
    if (this.#isClosed()) {
      await worker.close();
      return;
    }
    this.#current = worker;
    this.#startedAt = this.#clock.now();
    this.#failedStarts = 0;
    this.#restarts++;
    this.#state = 'running';
    this.#watch(worker);
    this.emit('restarted', { attempt });
  }
}
