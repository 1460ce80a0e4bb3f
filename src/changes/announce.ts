// Tells running instances, through Redis when it is configured, that something changed: the data
// (the shared change counter moves, so their response caches empty) or a revoked key (the shared
// revocation epoch moves, so they check keys again). Instances read both with their next rate-limit
// count (SharedChanges.noticed). Best effort: they also notice both within a second through the
// database counters (counters.queries.ts).
import { Redis } from 'ioredis';

/** Where the announcements go (Config's REDIS_URL and REDIS_PREFIX); no URL: nowhere, the database counters suffice. */
export interface RedisSettings {
  redisUrl?: string | undefined;
  redisPrefix: string;
}

/** The shared data-change counter: moved by every import or sync that changed data. */
export const dataChangesKey = (prefix: string) => `${prefix}data-changes`;

/** The shared revocation epoch: moved by every revocation. */
export const revocationEpochKey = (prefix: string) => `${prefix}keys-revoked-epoch`;

/**
 * How a process tells the others what it changed, once the change is committed: the server through
 * its own state and connection (SharedChanges), a command run on its own through a short connection
 * (commandAnnouncer).
 */
export interface Announcer {
  revocation(): Promise<void>;
  dataChanged(): Promise<void>;
}

export function announceDataChanged(config: RedisSettings): Promise<void> {
  return withRedis(config, (redis) => redis.incr(dataChangesKey(config.redisPrefix)));
}

export function announceRevocation(config: RedisSettings): Promise<void> {
  return withRedis(config, (redis) => redis.incr(revocationEpochKey(config.redisPrefix)));
}

/**
 * The announcer of a command: through Redis as above, after `local` (a command run inside the server,
 * over the admin channel, also empties the server's own memory at once).
 */
export function commandAnnouncer(config: RedisSettings, local: Partial<Announcer> = {}): Announcer {
  return {
    revocation: async () => {
      await local.revocation?.();
      await announceRevocation(config);
    },
    dataChanged: async () => {
      await local.dataChanged?.();
      await announceDataChanged(config);
    },
  };
}

async function withRedis(config: RedisSettings, send: (redis: Redis) => Promise<unknown>): Promise<void> {
  if (!config.redisUrl) return;
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000, lazyConnect: true });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await send(redis);
  } catch {
    // Redis down: see above.
  } finally {
    redis.disconnect();
  }
}
