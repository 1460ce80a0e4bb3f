// Tracks the data version (bumped by every import or sync that changes something), so response
// caches on every instance drop what they hold as soon as data changes: at once through Redis
// pub/sub when configured, and within POLL_MS by reading the version from the database anyway.
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Db } from '../db/index.ts';
import { readDataVersion } from '../data/import.ts';

export const dataVersionChannel = (prefix: string) => `${prefix}data-version`;
const POLL_MS = 1_000;

export class DataVersionWatcher {
  version = -1;
  private timer: NodeJS.Timeout | undefined;
  private subscriber: Redis | undefined;
  private listeners: ((version: number) => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly redisPrefix = 'cds:',
  ) {}

  onChange(listener: (version: number) => void): void {
    this.listeners.push(listener);
  }

  async start(redis: Redis | undefined): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), POLL_MS).unref();
    if (redis) {
      this.subscriber = redis.duplicate({ enableOfflineQueue: true });
      this.subscriber.on('error', () => {});
      this.subscriber.on('message', () => void this.refresh());
      this.subscriber.subscribe(dataVersionChannel(this.redisPrefix)).catch(() => {});
    }
  }

  async refresh(): Promise<void> {
    try {
      this.set(await readDataVersion(this.db));
    } catch (error) {
      this.log.debug({ err: error }, 'data version not readable');
    }
  }

  set(version: number): void {
    if (version === this.version) return;
    this.version = version;
    for (const listener of this.listeners) listener(version);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.subscriber?.disconnect();
  }
}

/** Tells every instance that data changed (best effort: the polling catches up anyway). */
export async function announceDataVersion(redis: Redis | undefined, prefix: string, version: number): Promise<void> {
  try {
    await redis?.publish(dataVersionChannel(prefix), String(version));
  } catch {
    // Redis down: instances notice within a second through the database.
  }
}
