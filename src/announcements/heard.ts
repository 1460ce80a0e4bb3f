// The server's side of "another instance changed something". It hears of changes three ways:
// - its own: announce() empties its memory at once and moves the Redis counter for the others;
// - with Redis, before the next request: the values of the shared counters come back with every
//   rate-limit count (the limiter hands them to noticed()), so a moved revocation epoch empties the
//   memory of valid keys and a moved data-change counter reads the data version again (pub/sub would
//   not do: its message can reach an instance after the next request does);
// - within a second everywhere, through the database counters (the only path without Redis).
import type { FastifyBaseLogger } from 'fastify';
import type { RedisClient } from '../redis.ts';
import type { Db } from '../db/index.ts';
import { readRevocations } from './counters.queries.ts';
import { DataVersionWatcher } from './data-version.ts';
import { dataChangesKey, revocationEpochKey, type Announcer } from './announce.ts';

const POLL_MS = 1_000;

/** The last value seen of a shared counter. */
class Sighting {
  private last: string | null | undefined;

  /** True when the value differs from the last one seen, and on the first sighting. */
  moved(value: string | null): boolean {
    if (value === this.last) return false;
    this.last = value;
    return true;
  }
}

export interface Noticed {
  /** Keys were revoked elsewhere since the last count: a key remembered as valid must be checked again. */
  revoked: boolean;
  /** Reading the data version again, when the data changed elsewhere. */
  refreshing?: Promise<void>;
}

export class SharedChanges implements Announcer {
  readonly dataVersion: DataVersionWatcher;
  /** The Redis keys whose values the limiter reads with each count, in the order noticed() takes them. */
  readonly watchedKeys: readonly string[];
  private revocationListeners: (() => void)[] = [];
  private revocationsSeen = -1;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private readonly epoch = new Sighting();
  private readonly changes = new Sighting();
  /** The reading of the data version started by the last moved data-change counter, until it is done. */
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly redis: RedisClient | undefined,
    /** Of every key (redisKeyPrefix: on a cluster, the hash tag that puts them in the limiter's slot). */
    private readonly prefix: string,
  ) {
    this.dataVersion = new DataVersionWatcher(db, log);
    this.watchedKeys = [revocationEpochKey(prefix), dataChangesKey(prefix)];
  }

  /** Called whenever keys were revoked (here or elsewhere): memories of valid keys empty themselves. */
  onRevocation(listener: () => void): void {
    this.revocationListeners.push(listener);
  }

  async start(): Promise<void> {
    await this.dataVersion.start();
    await this.pollRevocations();
    // Skipped while the previous poll still waits (as the data version's, data-version.ts).
    this.timer = setInterval(() => {
      this.polling ??= this.pollRevocations().finally(() => (this.polling = undefined));
    }, POLL_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.dataVersion.stop();
  }

  /** The values of watchedKeys as the limiter read them with a count. */
  noticed(values: readonly (string | null)[]): Noticed {
    const revoked = this.epoch.moved(values[0] ?? null);
    if (revoked) this.revoked();
    if (this.changes.moved(values[1] ?? null)) {
      const refreshing = this.dataVersion.refresh().finally(() => {
        if (this.refreshing === refreshing) this.refreshing = undefined;
      });
      this.refreshing = refreshing;
    }
    // Every request that read the moved counter waits for the version, not only the first: another one at the same
    // time (which saw the same value, hence "not moved") would otherwise be answered from the cache of before.
    return this.refreshing ? { revoked, refreshing: this.refreshing } : { revoked };
  }

  /** After this process revoked a key: forget now, and tell the other instances. */
  async revocation(): Promise<void> {
    this.revoked();
    // The database's counter moved with the revocation: read it now, so that the poll does not take this very
    // revocation for another one and forget every remembered key again, up to a second later, in the middle of
    // whatever requests come next (each of their keys then read from the database once more).
    await this.readRevocationsNow();
    await this.increment(revocationEpochKey(this.prefix));
  }

  /** After this process changed data: read the version now, and tell the other instances. */
  async dataChanged(): Promise<void> {
    await this.dataVersion.refresh();
    await this.increment(dataChangesKey(this.prefix));
  }

  private revoked(): void {
    for (const listener of this.revocationListeners) listener();
  }

  private async increment(key: string): Promise<void> {
    try {
      await this.redis?.incr(key);
    } catch {
      // Redis down: the others notice through the database within a second.
    }
  }

  /** The revocation counter read now: waits for a poll in flight, whose value may be from before. */
  private async readRevocationsNow(): Promise<void> {
    await this.polling;
    await this.pollRevocations();
  }

  private async pollRevocations(): Promise<void> {
    try {
      const seen = await readRevocations(this.db);
      if (seen !== this.revocationsSeen) this.revoked();
      this.revocationsSeen = seen;
    } catch (error) {
      this.log.debug({ err: error }, 'revocation counter not readable');
    }
  }
}
