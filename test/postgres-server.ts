// A private PostgreSQL server for tests that stop and restart it (never the machine's shared one):
// initdb in a temporary folder, on a free port, with its unix socket inside that folder.
// initdb refuses to run as root, so as root every command runs as the `postgres` user.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './process.ts';

const exec = promisify(execFile);

export interface PrivatePostgres {
  url: string;
  start(): Promise<void>;
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  destroy(): Promise<void>;
}

/** The folder of initdb and pg_ctl: Debian's newest /usr/lib/postgresql/N/bin, else PATH. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin/initdb')))
    : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions[0]) return path.join(root, versions[0], 'bin');
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(path.join(dir, 'initdb'))) return dir;
  throw new Error(
    'initdb and pg_ctl not found (looked in /usr/lib/postgresql/*/bin and PATH): this test starts a PostgreSQL server of ' +
      "its own. Install the server binaries, e.g. `apt-get install postgresql` (Debian) or your system's postgresql-server package.",
  );
}

/** A temporary folder the server's user owns, and how to run a server tool as that user. */
async function serverFolder(): Promise<{ dir: string; run: (tool: string, args: string[]) => Promise<unknown> }> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-pg-'));
  if (asRoot) {
    const uid = Number((await exec('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await exec('id', ['-g', 'postgres'])).stdout.trim());
    await fs.chown(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    asRoot
      ? exec('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args])
      : exec(path.join(bin, tool), args);
  return { dir, run };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const { dir, run } = await serverFolder();
  const data = path.join(dir, 'data');
  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  // (initdb's pg_hba.conf also trusts replication connections from 127.0.0.1, and wal_level is `replica` by default:
  // startPrivateStandby can copy it.)
  return serve(dir, data, run);
}

/**
 * A streaming replica of `primary` (a private server above): `pg_basebackup -R` (which writes standby.signal and the
 * primary_conninfo), started on a port of its own. Read-only, hot standby; `url` names the same database as `primary`.
 */
export async function startPrivateStandby(primary: PrivatePostgres): Promise<PrivatePostgres> {
  const { dir, run } = await serverFolder();
  const data = path.join(dir, 'data');
  const source = new URL(primary.url);
  const args = ['-D', data, '-h', source.hostname, '-p', source.port, '-U', 'postgres', '-R', '-X', 'stream'];
  await run('pg_basebackup', [...args, '--no-sync', '-c', 'fast']);
  const server = await serve(dir, data, run);
  const url = new URL(server.url);
  url.pathname = source.pathname;
  return { ...server, url: url.toString() };
}

async function serve(
  dir: string,
  data: string,
  run: (tool: string, args: string[]) => Promise<unknown>,
): Promise<PrivatePostgres> {
  const port = await freePort();
  // No fsync: the data is thrown away; the test is about connections, not durability.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  let running = false;
  const server: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
      running = true;
    },
    async stop(mode) {
      await run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await server.stop('immediate').catch(() => {});
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
  return server;
}
