// Redis topologies of a test's own, from the machine's redis-server and redis-cli (Debian's redis-server and
// redis-tools): a Redis Cluster of three primaries, and a primary, two replicas and one Sentinel watching them. Each
// lives in a temporary folder on free ports and is removed by stop(); the machine's Redis is never touched.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './process.ts';
import { redisServerPath } from './redis-server.ts';

const exec = promisify(execFile);

/** Waits for a condition, polling, until a deadline; the error names what did not happen. */
export async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  what: string,
  pollMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${(last as Error).message})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** A command for one server, on a connection that fails rather than retries. */
async function ask(port: number, ...args: (string | number)[]): Promise<unknown> {
  return askWith(port, undefined, ...args);
}

/** `ask` of a server that wants a password (a sentinel's `requirepass`). */
async function askWith(port: number, password: string | undefined, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis(port, '127.0.0.1', {
    ...(password ? { password } : {}),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(String(args[0]), ...args.slice(1).map(String));
  } finally {
    client.disconnect();
  }
}

interface Server {
  port: number;
  child: ChildProcess;
}

async function startServer(dir: string, port: number, args: string[], password?: string): Promise<Server> {
  await fs.mkdir(dir, { recursive: true });
  const child = spawn(redisServerPath(), args, { cwd: dir, stdio: 'ignore' });
  await until(
    async () => (await askWith(port, password, 'PING')) === 'PONG',
    10_000,
    `redis-server on port ${port} answers`,
  );
  return { port, child };
}

const BASE = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

async function kill(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    server.child.once('exit', () => resolve());
    server.child.kill('SIGKILL');
  });
}

export interface PrivateCluster {
  /** REDIS_URL of the service: one node, from which ioredis finds the others. */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

/** Three primaries (no replicas) joined by `redis-cli --cluster create`; resolves once every node says cluster_state:ok. */
export async function startRedisCluster(): Promise<PrivateCluster> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-redis-cluster-'));
  const servers: Server[] = [];
  const stop = async () => {
    await Promise.all(servers.map(kill));
    await fs.rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      // The bus port is chosen too: the default, port + 10000, may be taken or past 65535.
      const bus = await freePort();
      servers.push(
        await startServer(path.join(dir, String(port)), port, [
          ...BASE,
          '--port',
          String(port),
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-port',
          String(bus),
        ]),
      );
    }
    const ports = servers.map((s) => s.port);
    const nodes = ports.map((port) => `127.0.0.1:${port}`);
    await exec('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes']).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        throw new Error(
          'redis-cli not found on the PATH: install it, e.g. `apt-get install redis-tools` (Debian/Ubuntu)',
        );
      },
    );
    for (const port of ports) {
      await until(
        async () => String(await ask(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
        20_000,
        `cluster node ${port} in state ok`,
      );
    }
    return { url: `redis://127.0.0.1:${ports[0]}`, ports, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface PrivateSentinel {
  /** REDIS_SENTINELS and REDIS_SENTINEL_NAME of the service. */
  sentinels: string;
  name: string;
  /** The sentinel's own password (its requirepass), when it was started with one: REDIS_SENTINEL_PASSWORD. */
  password?: string;
  /** The port of the primary as the sentinel names it. */
  primary(): Promise<number>;
  /** Ends the primary's process at once (SIGKILL): the sentinel promotes a replica after down-after-milliseconds. */
  killPrimary(): Promise<number>;
  /** SENTINEL FAILOVER: a replica promoted while the primary still runs (it becomes a replica); the old primary's port. */
  failover(): Promise<number>;
  /** Until the sentinel counts a replica of the current primary as in sync: one it could promote. */
  replicaInSync(): Promise<void>;
  /**
   * Listens for the sentinel's next +switch-master (the end of a failover, when clients are told of the new primary):
   * resolves once listening; `heard` then resolves with the time it is heard.
   */
  nextSwitch(timeoutMs: number): Promise<{ heard: Promise<number> }>;
  stop(): Promise<void>;
}

/** A sentinel's view of a primary's failure: down after 1 s; a failover ends (+switch-master) within 3 s of the promotion. */
const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 3_000;

/**
 * A primary, two replicas of it, and one sentinel (quorum 1) that knows them, with `password` as the sentinel's
 * requirepass when given (the servers have none); resolves once the sentinel counts the replicas in sync. Two: after a
 * failover the other replica follows the new primary within the failover, so a next one can follow at once (a demoted
 * primary is made a replica only ~8 s later, and seen in sync up to 10 s after).
 */
export async function startRedisSentinel(name = 'cds', password?: string): Promise<PrivateSentinel> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-redis-sentinel-'));
  const servers = new Map<number, Server>();
  const stop = async () => {
    await Promise.all([...servers.values()].map(kill));
    await fs.rm(dir, { recursive: true, force: true });
  };
  try {
    const primaryPort = await freePort();
    servers.set(
      primaryPort,
      await startServer(path.join(dir, String(primaryPort)), primaryPort, [...BASE, '--port', String(primaryPort)]),
    );
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const replicaOf = ['--replicaof', '127.0.0.1', String(primaryPort)];
      servers.set(
        port,
        await startServer(path.join(dir, String(port)), port, [...BASE, '--port', String(port), ...replicaOf]),
      );
      await until(
        async () => String(await ask(port, 'INFO', 'replication')).includes('master_link_status:up'),
        10_000,
        `the replica on ${port} in sync`,
      );
    }
    // Sentinel rewrites its configuration file, so it is one of its own in the folder.
    const sentinelPort = await freePort();
    const config = path.join(dir, 'sentinel.conf');
    await fs.writeFile(
      config,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 1`,
        `sentinel down-after-milliseconds ${name} ${DOWN_AFTER_MS}`,
        `sentinel failover-timeout ${name} ${FAILOVER_TIMEOUT_MS}`,
        ...(password ? [`requirepass ${password}`] : []),
        '',
      ].join('\n'),
    );
    // `redis-server --sentinel`: Debian's redis-sentinel is the same binary, in a package of its own.
    servers.set(sentinelPort, await startServer(dir, sentinelPort, [config, '--sentinel'], password));
    const askSentinel = (...args: string[]) => askWith(sentinelPort, password, ...args);
    const primary = async () => {
      const [, port] = (await askSentinel('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string];
      return Number(port);
    };
    const inSync = async (count: number) =>
      until(
        async () => {
          const replicas = (await askSentinel('SENTINEL', 'REPLICAS', name)) as string[][];
          const synced = replicas.filter((fields) => {
            const field = (key: string) => fields[fields.indexOf(key) + 1];
            return field('flags') === 'slave' && field('master-link-status') === 'ok';
          });
          return synced.length >= count;
        },
        20_000,
        `the sentinel counts ${count} replica(s) in sync`,
        100,
      );
    await inSync(2);
    return {
      sentinels: `127.0.0.1:${sentinelPort}`,
      name,
      ...(password ? { password } : {}),
      primary,
      async killPrimary() {
        const port = await primary();
        await kill(servers.get(port)!);
        return port;
      },
      async failover() {
        const port = await primary();
        // Refused (NOGOODSLAVE, INPROG) until the sentinel has seen a replica it can promote: asked again until then.
        await until(
          async () => (await askSentinel('SENTINEL', 'FAILOVER', name)) === 'OK',
          15_000,
          'the sentinel accepts SENTINEL FAILOVER',
          200,
        );
        return port;
      },
      replicaInSync: () => inSync(1).then(() => {}),
      async nextSwitch(timeoutMs) {
        const listener = new Redis(sentinelPort, '127.0.0.1', {
          maxRetriesPerRequest: 0,
          ...(password ? { password } : {}),
        });
        listener.on('error', () => {});
        await listener.subscribe('+switch-master');
        const heard = new Promise<number>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no +switch-master within ${timeoutMs} ms`)), timeoutMs);
          listener.once('message', () => {
            clearTimeout(timer);
            resolve(Date.now());
          });
        });
        return { heard: heard.finally(() => listener.disconnect()) };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
