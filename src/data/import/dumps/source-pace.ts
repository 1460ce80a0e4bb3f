// How slow a dumps source may be (`cds import --from-dumps`). Time is counted only while the import waits for the
// source (not while it writes a batch: the download is paused then): over every window of that waiting
// (CDS_SOURCE_TIMEOUT_MS) at least the floor's bytes (CDS_SOURCE_MIN_KBPS) must arrive, and at least one. A source
// that answers nothing, or drips a byte at a time, is aborted within about one window, never waited for endlessly.
import { ImportError } from '../../base/import-error.ts';

export interface SourcePace {
  /** The window, in milliseconds of waiting for the source. */
  timeoutMs: number;
  /** The floor, in bytes per second averaged over a window (0: one byte a window is enough). */
  minBytesPerSecond: number;
}

/** 30 s; 10 kB/s: far below any link that could carry the dumps (hundreds of MB), far above a drip. */
export const DEFAULT_PACE: SourcePace = { timeoutMs: 30_000, minBytesPerSecond: 10_000 };

/** Watches one request (the manifest, or one file): its signal aborts the request when the source falls behind. */
export class PaceWatch {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  /** Milliseconds waited before the current wait began, and when it began (undefined: paused). */
  private waited = 0;
  private since: number | undefined;
  private windowStart = 0;
  private windowBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pace: SourcePace,
    private readonly url: string,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.resume();
  }

  received(bytes: number): void {
    this.windowBytes += bytes;
  }

  /** The import is busy elsewhere (writing a batch, waiting out a 429): that time is not the source's. */
  pause(): void {
    if (this.since === undefined) return;
    this.waited += this.now() - this.since;
    this.since = undefined;
    clearTimeout(this.timer);
  }

  resume(): void {
    if (this.since !== undefined || this.signal.aborted) return;
    this.since = this.now();
    this.schedule();
  }

  stop(): void {
    this.pause();
  }

  private waitedNow(): number {
    return this.waited + (this.since === undefined ? 0 : this.now() - this.since);
  }

  private schedule(): void {
    const left = this.windowStart + this.pace.timeoutMs - this.waitedNow();
    this.timer = setTimeout(() => this.check(), Math.max(0, left));
  }

  private check(): void {
    const waited = this.waitedNow();
    if (waited - this.windowStart >= this.pace.timeoutMs) {
      const seconds = this.pace.timeoutMs / 1000;
      const floor = Math.max(1, (this.pace.minBytesPerSecond * this.pace.timeoutMs) / 1000);
      if (this.windowBytes < floor) {
        this.since = undefined;
        this.controller.abort(
          new ImportError(
            this.url,
            undefined,
            this.windowBytes === 0
              ? `the source sent nothing for ${seconds} s (CDS_SOURCE_TIMEOUT_MS)`
              : `the source sent ${this.windowBytes} bytes in ${seconds} s, below the floor of ` +
                  `${this.pace.minBytesPerSecond / 1000} kB/s (CDS_SOURCE_MIN_KBPS)`,
          ),
        );
        return;
      }
      this.windowStart = waited;
      this.windowBytes = 0;
    }
    this.schedule();
  }
}
