// Valid API keys are remembered in memory for a short while, so a cached read needs no database
// round trip. Any revocation empties every instance's memory: at once in the revoking process and
// through Redis pub/sub, and within a second everywhere through a counter in the database.
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Db } from '../db/index.ts';
import { readMetaCounter } from '../db/meta.queries.ts';
import type { KeyIdentity } from '../api-keys/api-keys.service.ts';
import { REVOCATIONS_KEY } from '../api-keys/api-keys.queries.ts';
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
const POLL_MS = 1_000;

interface Entry {
  identity: KeyIdentity;
  /** Until when the entry may be used: the key's expiry or the TTL, whichever comes first. */
  until: number;
}

export const revocationChannel = (prefix: string) => `${prefix}keys-revoked`;

export class AuthCache {
  private entries = new Map<string, Entry>();
  private epoch = -1;
  private timer: NodeJS.Timeout | undefined;
  private subscriber: Redis | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly redis: Redis | undefined,
    private readonly prefix: string,
  ) {}

  get(raw: string, now = Date.now()): KeyIdentity | undefined {
    const entry = this.entries.get(raw);
    if (!entry) return undefined;
    if (entry.until > now) return entry.identity;
    this.entries.delete(raw);
    return undefined;
  }

  set(raw: string, identity: KeyIdentity, expiresAt: Date, now = Date.now()): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(raw, { identity, until: Math.min(expiresAt.getTime(), now + TTL_MS) });
  }

  clear(): void {
    this.entries.clear();
  }

  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), POLL_MS).unref();
    if (this.redis) {
      this.subscriber = this.redis.duplicate({ enableOfflineQueue: true });
      this.subscriber.on('error', () => {});
      this.subscriber.on('message', () => this.clear());
      this.subscriber.subscribe(revocationChannel(this.prefix)).catch(() => {});
    }
  }

  /** Called by the process that revoked a key: forget now, and tell the other instances. */
  async revoked(): Promise<void> {
    this.clear();
    try {
      await this.redis?.publish(revocationChannel(this.prefix), '1');
    } catch {
      // Redis down: the others notice through the database within a second.
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.subscriber?.disconnect();
  }

  private async poll(): Promise<void> {
    try {
      const epoch = await readMetaCounter(this.db, REVOCATIONS_KEY);
      if (epoch !== this.epoch) this.clear();
      this.epoch = epoch;
    } catch (error) {
      this.log.debug({ err: error }, 'revocation counter not readable');
    }
  }
}
