// The optional Redis connection. Commands fail fast while it is down (no offline queue), so every
// caller can fall back to its per-process behaviour; ioredis reconnects in the background.
import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

export function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 2_000,
    lazyConnect: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) log.warn({ err: { message: error.message } }, 'redis unavailable: using per-instance fallbacks');
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info('redis reachable again');
    down = false;
  });
  return redis;
}

export function isReady(redis: Redis | undefined): redis is Redis {
  return redis !== undefined && redis.status === 'ready';
}
