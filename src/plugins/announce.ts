// Tells running instances, through Redis when it is configured, that something changed: a new data
// version (their response caches empty) or a revoked key (the shared revocation epoch moves, so they
// check keys again). Best effort: the instances also notice both within a second through the database.
import { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { announceDataVersion } from './data-version.ts';
import { announceRevokedKey } from './auth-cache.ts';

type RedisSettings = Pick<Config, 'redisUrl' | 'redisPrefix'>;

export function announceVersion(config: RedisSettings, version: number): Promise<void> {
  return publish(config, (redis) => announceDataVersion(redis, config.redisPrefix, version));
}

export function announceRevocation(config: RedisSettings): Promise<void> {
  return publish(config, (redis) => announceRevokedKey(redis, config.redisPrefix));
}

async function publish(config: RedisSettings, send: (redis: Redis) => Promise<void>): Promise<void> {
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
