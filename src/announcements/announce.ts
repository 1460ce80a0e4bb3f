// Tells running instances, through Redis when it is configured, that something changed: the data
// (the shared change counter moves, so their response caches empty) or a revoked key (the shared
// revocation epoch moves, so they check keys again). Instances read both with their next rate-limit
// count (SharedChanges.noticed). Best effort: they also notice both within a second through the
// database counters (counters.queries.ts).
import { openRedis, redisConfigured, redisKeyPrefix, type RedisClient, type RedisSettings } from '../redis.ts';

/** Where the announcements go (Config's REDIS_* variables); no Redis: nowhere, the database counters suffice. */
export type { RedisSettings };

/** The shared data-change counter: moved by every import or sync that changed data. (`prefix`: redisKeyPrefix.) */
export const dataChangesKey = (prefix: string) => `${prefix}data-changes`;

/** The shared revocation epoch: moved by every revocation. (`prefix`: redisKeyPrefix.) */
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
  return withRedis(config, (redis) => redis.incr(dataChangesKey(redisKeyPrefix(config))));
}

export function announceRevocation(config: RedisSettings): Promise<void> {
  return withRedis(config, (redis) => redis.incr(revocationEpochKey(redisKeyPrefix(config))));
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

async function withRedis(config: RedisSettings, send: (redis: RedisClient) => Promise<unknown>): Promise<void> {
  if (!redisConfigured(config)) return;
  // Of the configured mode (a cluster follows MOVED to the key's node; Sentinel names the primary); tried once.
  const redis = openRedis(config, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    await send(redis);
  } catch {
    // Redis down: see above.
  } finally {
    redis.disconnect();
  }
}
