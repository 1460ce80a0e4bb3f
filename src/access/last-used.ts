// lastUsedAt is written in batches, at most a second late, instead of one UPDATE per request.
import type { Db } from '../db/index.ts';
import { recordLastUsed } from '../api-keys/api-keys.queries.ts';

export class LastUsedRecorder {
  /** Epoch milliseconds of each key's last use (a number: no Date made per request). */
  private pending = new Map<string, number>();
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
    /** Waits `ms` (an unref'd timer, or a test's fake clock). */
    private readonly sleep: (ms: number) => Promise<void>,
    private readonly delayMs = 1000,
  ) {}

  record(keyId: string, at = Date.now()): void {
    this.pending.set(keyId, at);
    if (this.scheduled) return;
    this.scheduled = true;
    // (a wait that cannot be cancelled: a flush before it ends leaves it nothing, or the next batch, to write)
    void this.sleep(this.delayMs).then(() => {
      this.scheduled = false;
      return this.flush();
    });
  }

  async flush(): Promise<void> {
    const batch = this.pending;
    if (batch.size === 0) return;
    this.pending = new Map();
    try {
      await recordLastUsed(this.db, new Map([...batch].map(([id, at]) => [id, new Date(at)])));
    } catch (error) {
      // A lost timestamp is not worth failing requests for; keep the newest for the next try.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.onError(error);
    }
  }
}
