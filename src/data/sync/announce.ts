// Tells running instances that the data version moved, so their response caches drop what they hold at
// once (they would also notice within a second by polling the database).
import { Redis } from 'ioredis';
import { announceDataVersion } from '../../plugins/data-version.ts';

export async function announceVersion(redisUrl: string | undefined, prefix: string, version: number): Promise<void> {
  if (!redisUrl) return;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000, lazyConnect: true });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await announceDataVersion(redis, prefix, version);
  } catch {
    // Redis down: the instances' polling catches up.
  } finally {
    redis.disconnect();
  }
}
