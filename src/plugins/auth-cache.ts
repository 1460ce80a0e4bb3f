// Valid API keys are remembered in memory for a short while, so a cached read needs no database
// round trip. A revocation empties every instance's memory:
// - at once in the revoking process;
// - with Redis, before the next request on every other instance: a revocation epoch in Redis is
//   read in the same round trip as the rate-limit counter, and a moved epoch empties the memory and
//   sends the request's key back to the database (pub/sub would not do: its message can reach an
//   instance after the next request does);
// - within a second everywhere, through a counter in the database (the only path without Redis).
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Db } from '../db/index.ts';
import { readMetaCounter } from '../db/meta.queries.ts';
import type { KeyCache, KeyIdentity } from '../api-keys/api-keys.service.ts';
import { REVOCATIONS_KEY } from '../api-keys/api-keys.queries.ts';
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
const POLL_MS = 1_000;

interface Entry {
  identity: KeyIdentity;
  /** Until when the entry may be used: the key's expiry or the TTL, whichever comes first. */
  until: number;
}

/** The shared revocation epoch: moved by every revocation, read by the limiter (rate-limit.ts). */
export const revocationEpochKey = (prefix: string) => `${prefix}keys-revoked-epoch`;

export class AuthCache implements KeyCache {
  private entries = new Map<string, Entry>();
  private epoch = -1;
  private emptied = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly redis: Redis | undefined,
    private readonly prefix: string,
  ) {}

  get generation(): number {
    return this.emptied;
  }

  get(raw: string, now = Date.now()): KeyIdentity | undefined {
    const entry = this.entries.get(raw);
    if (!entry) return undefined;
    if (entry.until > now) return entry.identity;
    this.entries.delete(raw);
    return undefined;
  }

  /** Remembers a key the database found valid, unless the memory was emptied since it was asked. */
  set(raw: string, identity: KeyIdentity, expiresAt: Date, generation: number, now = Date.now()): void {
    if (generation !== this.emptied) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(raw, { identity, until: Math.min(expiresAt.getTime(), now + TTL_MS) });
  }

  clear(): void {
    this.entries.clear();
    this.emptied++;
  }

  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), POLL_MS).unref();
  }

  /** Called by the process that revoked a key: forget now, and tell the other instances. */
  async revoked(): Promise<void> {
    this.clear();
    try {
      await this.redis?.incr(revocationEpochKey(this.prefix));
    } catch {
      // Redis down: the others notice through the database within a second.
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
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
