// A private PgBouncer in transaction mode in front of a test's own PostgreSQL (test/postgres-server.ts): Debian's
// `pgbouncer` (installed by .ci/run), on a free port, its configuration in a temporary folder, every database of the
// server served (`*`), users trusted. PgBouncer refuses to run as root: as root it runs as the `postgres` user (-u).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findProgram, freePort } from './process.ts';

const exec = promisify(execFile);

export interface PrivatePgbouncer {
  /** The address of `database` through the pooler. */
  url(database: string): string;
  /** What PgBouncer logged (its login failures, closed connections). */
  output(): string;
  /** Stops it at once (its clients' connections are closed); start() brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** Debian's /usr/sbin/pgbouncer, else the PATH's; a missing one fails the test with what to install. */
function pgbouncerPath(): string {
  return findProgram(
    'pgbouncer',
    'pgbouncer not found (looked in /usr/sbin, /usr/bin and PATH): this test starts a PgBouncer of its own. ' +
      'Install it, e.g. `apt-get install pgbouncer` (Debian/Ubuntu, what .ci/run does) or `brew install pgbouncer`.',
    ['/usr/sbin', '/usr/bin', ...(process.env.PATH ?? '').split(path.delimiter)],
  );
}

/** `serverUrl`: the PostgreSQL server behind it (its host and port; any database). */
export async function startPgbouncer(serverUrl: string): Promise<PrivatePgbouncer> {
  const command = pgbouncerPath();
  const server = new URL(serverUrl);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-pgbouncer-'));
  const port = await freePort();
  await fs.writeFile(path.join(dir, 'userlist.txt'), '"postgres" ""\n');
  await fs.writeFile(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      // Each test database gets a pool of its own; the service's pools (10 + lists) and the tests' fit in these.
      'max_client_conn = 500',
      'default_pool_size = 20',
      'admin_users = postgres',
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number((await exec('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await exec('id', ['-g', 'postgres'])).stdout.trim());
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) await fs.chown(path.join(dir, file), uid, gid);
  }
  const args = [...(asRoot ? ['-u', 'postgres'] : []), path.join(dir, 'pgbouncer.ini')];
  let output = '';
  let child: ChildProcess | undefined;
  let exited = Promise.resolve();
  const start = async () => {
    const started = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    started.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    await listening(port, started, () => output);
  };
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // PgBouncer's immediate shutdown
      await exited;
    }
  };
  const destroy = async () => {
    await stop();
    await fs.rm(dir, { recursive: true, force: true });
  };
  try {
    await start();
  } catch (error) {
    await destroy();
    throw error;
  }
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    output: () => output,
    start,
    stop,
    destroy,
  };
}

async function listening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on ${port} within 10 s: ${output()}`);
}
