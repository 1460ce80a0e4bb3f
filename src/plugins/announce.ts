// Tells running instances, through Redis when it is configured, that something changed: the data
// (the shared change counter moves, so their response caches empty) or a revoked key (the shared
// revocation epoch moves, so they check keys again). Instances read both with their next rate-limit
// count. Best effort: they also notice both within a second through the database.
import { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { dataChangesKey } from './data-version.ts';
import { revocationEpochKey } from './auth-cache.ts';

type RedisSettings = Pick<Config, 'redisUrl' | 'redisPrefix'>;

export function announceDataChanged(config: RedisSettings): Promise<void> {
  return withRedis(config, (redis) => redis.incr(dataChangesKey(config.redisPrefix)));
}

export function announceRevocation(config: RedisSettings): Promise<void> {
  return withRedis(config, (redis) => redis.incr(revocationEpochKey(config.redisPrefix)));
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
