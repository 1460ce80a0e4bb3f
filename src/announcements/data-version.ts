// Tracks the data version (bumped by every import or sync that changes something), so response
// caches on every instance drop what they hold as soon as data changes. With Redis, a change
// counter there is read with every rate-limit count (SharedChanges.noticed), so an instance catches
// up before its next request; in any case the version is read from the database every POLL_MS.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import type { PrimaryPositions } from '../db/server/replicas.ts';
import { readDataVersion, readDataVersionAt } from './counters.queries.ts';

const POLL_MS = 1_000;

export class DataVersionWatcher {
  version = -1;
  private timer: NodeJS.Timeout | undefined;
  private listeners: ((version: number) => void)[] = [];

  private polling: Promise<void> | undefined;
  /** With read replicas (app.ts): told the primary's WAL position with every reading of the version. */
  positions: PrimaryPositions | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  onChange(listener: (version: number) => void): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    await this.refresh();
    // A tick while the previous one still waits (a database that does not answer) is skipped: polls must not
    // take one more connection every second of an outage.
    this.timer = setInterval(() => {
      this.polling ??= this.refresh().finally(() => (this.polling = undefined));
    }, POLL_MS).unref();
  }

  async refresh(): Promise<void> {
    try {
      if (!this.positions) {
        this.set(await readDataVersion(this.db));
        return;
      }
      const { version, wal } = await readDataVersionAt(this.db);
      // Before the listeners hear of the version: what they read again (counts) must not come from a replica behind it.
      this.positions.observed(wal, version !== this.version);
      this.set(version);
    } catch (error) {
      this.log.debug({ err: error }, 'data version not readable');
    }
  }

  set(version: number): void {
    if (version === this.version) return;
    this.version = version;
    for (const listener of this.listeners) listener(version);
  }

  stop(): Promise<void> {
    clearInterval(this.timer);
    return Promise.resolve();
  }
}
