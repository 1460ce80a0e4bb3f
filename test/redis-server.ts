// A private Redis for tests that stop and restart it, started from the machine's redis-server.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { findProgram, freePort } from './process.ts';

export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** The redis-server of the PATH; a missing one fails the test with what to install (never a bare ENOENT). */
export function redisServerPath(): string {
  return findProgram(
    'redis-server',
    'redis-server not found on the PATH: this test starts a Redis server of its own. ' +
      'Install it, e.g. `apt-get install redis-server` (Debian/Ubuntu) or `brew install redis` (macOS).',
  );
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const command = redisServerPath();
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(command, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const probe = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    for (let i = 0; i < 100; i++) {
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    probe.disconnect();
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    async stop() {
      const running = child;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
      });
    },
  };
}
