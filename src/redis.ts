// The optional Redis: one server (standalone), a Redis Cluster, or the primary that Sentinel names (REDIS_MODE,
// docs/redis.md), each through ioredis' own support. Commands fail fast while it is down (no offline queue), so every
// caller can fall back to its per-process behaviour; ioredis reconnects in the background (the limiter's
// SharedCounting logs when counting leaves Redis and when it returns).
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisMode } from './config.ts';

/** A connection of any mode: the commands the service sends are the same. */
export type RedisClient = Redis | Cluster;

/** Config's REDIS_* variables (a command's or a test's own copy may leave the mode out: standalone). */
export interface RedisSettings {
  redisUrl?: string | undefined;
  redisPrefix: string;
  redisMode?: RedisMode | undefined;
  redisSentinels?: readonly string[] | undefined;
  redisSentinelName?: string | undefined;
  redisSentinelUsername?: string | undefined;
  redisSentinelPassword?: string | undefined;
}

/** Whether a Redis is configured at all (config.ts checked that each mode has what it needs). */
export function redisConfigured(settings: RedisSettings): boolean {
  return settings.redisMode === 'sentinel' ? (settings.redisSentinels?.length ?? 0) > 0 : !!settings.redisUrl;
}

/**
 * The prefix of every key. On a cluster it is also their hash tag (`{cds:}…`), so that all of them live in one slot:
 * the limiter's script counts a request and reads the shared counters (revocations, data changes) in one atomic step,
 * which Redis Cluster allows only for keys of one slot (CROSSSLOT otherwise). The price: one primary holds them all.
 * Elsewhere the keys keep their names, so instances of an older version share them during a rolling upgrade.
 */
export function redisKeyPrefix(settings: RedisSettings): string {
  return settings.redisMode === 'cluster' ? `{${settings.redisPrefix}}` : settings.redisPrefix;
}

/** The server's connection: commands fail within 250 ms rather than hold a request while Redis does not answer. */
const SERVING = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 250,
  connectTimeout: 2_000,
} satisfies RedisOptions;

/** Time before the next attempt to connect: quick at first, at most 2 s (a failover is noticed within that). */
const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);

export function connectRedis(settings: RedisSettings): RedisClient {
  const client = openRedis(settings, SERVING);
  if (client instanceof Redis && settings.redisMode === 'sentinel') followFailovers(client, settings);
  return client;
}

/**
 * A connection of the configured mode. `options` apply to every connection it opens (a cluster's to each node, its
 * `retryStrategy` also to finding the cluster or the primary); `lazyConnect` waits for `connect()`, which resolves
 * once commands can be sent (a cluster's slots known, Sentinel's primary found).
 */
export function openRedis(settings: RedisSettings, options: RedisOptions): RedisClient {
  const credentials = fromUrl(settings.redisUrl);
  let readonlyAt = -Infinity;
  const common: RedisOptions = {
    ...credentials,
    retryStrategy,
    // A primary demoted by a failover answers writes with READONLY while the connection stays up: reconnecting asks
    // Sentinel (or the DNS of a managed endpoint) for the current primary. Once a second at most: every command in
    // flight gets its READONLY, and a server that stays a replica would otherwise be reconnected to at each probe.
    reconnectOnError: (error) => {
      if (!error.message.startsWith('READONLY') || performance.now() - readonlyAt < 1_000) return false;
      readonlyAt = performance.now();
      return true;
    },
    ...options,
  };
  let client: RedisClient;
  if (settings.redisMode === 'cluster') {
    const { hostname, port } = new URL(settings.redisUrl!);
    // Left to the cluster: its nodes' reconnections (it finds the nodes again itself, ioredis' default) and `db` (a
    // cluster has only database 0).
    const { enableOfflineQueue, lazyConnect, retryStrategy: _retry, db: _db, ...perNode } = common;
    const cluster: ClusterOptions = {
      enableOfflineQueue,
      lazyConnect,
      clusterRetryStrategy: common.retryStrategy,
      // Finding the slots (CLUSTER SLOTS, on a node it may have to connect to first) is given as long as connecting to
      // a node: ioredis' 1 s ran out on a loaded 2-core machine while the node's own connection had 2 s, and the start
      // became a fallback ("Failed to refresh slots cache.") with nothing wrong with the cluster.
      slotsRefreshTimeout: common.connectTimeout ?? SERVING.connectTimeout,
      redisOptions: perNode,
      // Managed clusters with TLS serve certificates for their names: connect by name, not by resolved address.
      ...(credentials.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
    };
    client = new Cluster([{ host: hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(port || 6379) }], cluster);
  } else if (settings.redisMode === 'sentinel') {
    client = new Redis({
      ...common,
      sentinels: (settings.redisSentinels ?? []).map(sentinelAddress),
      name: settings.redisSentinelName!,
      ...sentinelCredentials(settings),
      role: 'master',
      sentinelRetryStrategy: common.retryStrategy ?? retryStrategy,
    });
  } else {
    client = new Redis(settings.redisUrl!, common);
  }
  // Without a listener an 'error' event would end the process; what it means for counting is SharedCounting's.
  client.on('error', () => {});
  return client;
}

/**
 * Sentinel announces the end of a failover (+switch-master) to its subscribers: a connection still on the old primary
 * (which may keep running, as after SENTINEL FAILOVER, and accept writes for seconds) reconnects to the new one. One
 * already there stays: when the old primary went away the connection found the promoted replica before the failover
 * ended, and ioredis' own failoverDetector would drop it once more (a second fallback for one failover).
 */
function followFailovers(client: Redis, settings: RedisSettings): void {
  const { sentinelUsername: username, sentinelPassword: password } = sentinelCredentials(settings);
  for (const sentinel of (settings.redisSentinels ?? []).map(sentinelAddress)) {
    const listener = new Redis({
      ...sentinel,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
      retryStrategy,
      connectTimeout: SERVING.connectTimeout,
    });
    listener.on('error', () => {});
    listener.subscribe('+switch-master').catch(() => {});
    listener.on('message', (_channel: string, message: string) => {
      const [name, , , host, port] = message.split(' ');
      if (name !== settings.redisSentinelName || client.status !== 'ready') return;
      const address = client.stream.remoteAddress?.replace(/^::ffff:/, '');
      if (address !== host || client.stream.remotePort !== Number(port)) client.disconnect(true);
    });
    client.once('end', () => listener.disconnect());
  }
}

export function isReady(redis: RedisClient | undefined): redis is RedisClient {
  return redis !== undefined && redis.status === 'ready';
}

/** REDIS_URL's user, password, database and TLS: in cluster and sentinel mode its host only finds the rest, or is unused. */
function fromUrl(raw: string | undefined): Pick<RedisOptions, 'username' | 'password' | 'db' | 'tls'> {
  if (!raw) return {};
  const url = new URL(raw);
  const db = Number(url.pathname.slice(1) || 0);
  return {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(db ? { db } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** What the sentinels themselves ask of a client (REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_PASSWORD), if anything. */
function sentinelCredentials(settings: RedisSettings): Pick<RedisOptions, 'sentinelUsername' | 'sentinelPassword'> {
  return {
    ...(settings.redisSentinelUsername ? { sentinelUsername: settings.redisSentinelUsername } : {}),
    ...(settings.redisSentinelPassword ? { sentinelPassword: settings.redisSentinelPassword } : {}),
  };
}

/** `host:port`, `[v6]:port` (config.ts checked the form). */
function sentinelAddress(entry: string): { host: string; port: number } {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(at + 1)) };
}
