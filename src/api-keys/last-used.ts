// lastUsedAt is written in batches, at most a second late, instead of one UPDATE per request.
import type { Db } from '../db/index.ts';
import { recordLastUsed } from './api-keys.queries.ts';

export class LastUsedRecorder {
  private pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
    private readonly delayMs = 1000,
  ) {}

  record(keyId: string, at = new Date()): void {
    this.pending.set(keyId, at);
    this.timer ??= setTimeout(() => void this.flush(), this.delayMs).unref();
  }

  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    if (batch.size === 0) return;
    this.pending = new Map();
    try {
      await recordLastUsed(this.db, batch);
    } catch (error) {
      // A lost timestamp is not worth failing requests for; keep the newest for the next try.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.onError(error);
    }
  }
}
