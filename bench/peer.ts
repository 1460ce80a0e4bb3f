// The peer of the bench's uncached issues page: Platformatic DB 2.61 (`@platformatic/db`), an automatic REST API over
// the same PostgreSQL table. It is installed by the bench itself, never into the project's dependencies:
//
// Install. Once, into node_modules/.cache/cds-bench-peer/ (already ignored with node_modules/): a generated
// package.json there asks for `@platformatic/db` ~2.61.0, and `npm install --prefix <dir> --no-audit --no-fund` puts it
// in <dir>/node_modules (its output goes to <dir>/install.log). It is reused as long as
// <dir>/node_modules/@platformatic/db/package.json says 2.61.x. The first install took about 75 s on the bench machine
// (530 packages, about 240 MB). npm 11 leaves the install scripts of three dependencies unrun (better-sqlite3,
// protobufjs, thread-cpu-usage): none of them is used over PostgreSQL without metrics. npm warns that two of them
// (cookie 2, content-disposition 3) want Node >= 22: they are not on the path served here, and it runs on Node 20.
//
// Configuration (keys read from the installed package's schema.json / config.d.ts, `$schema` 2.61.0), written by
// startPeer to platformatic.db.json in a temporary folder of its own, removed by stop():
// - server.hostname 127.0.0.1, server.port, server.logger.level `warn`. Platformatic forces the hostname to 0.0.0.0
//   when it believes it runs in Docker (/.dockerenv, or `docker` in /proc/self/cgroup: @platformatic/service's
//   createServer): there the peer listens on every interface, still answering on 127.0.0.1.
// - db.connectionString: the database URL (a `{...}` in it would be read as a placeholder of an environment variable).
// - No `migrations` key: no migration runs (and none is looked for); db.schemalock false: nothing is written.
// - db.graphql false (REST only), db.events false (no change events), db.cache false (uncached, like our row),
//   db.autoTimestamp false (nothing written anyway), db.poolSize 10 (its default, written out).
// - db.include: `issues` and the tables its foreign keys reach (milestones, repositories, members, organizations).
//   Including `issues` alone fails at start-up in 2.61 (sql-openapi reads the reverse relationships of every target
//   of a foreign key: "Cannot read properties of undefined (reading 'reverseRelationships')"); the other tables
//   (search, accounts, snapshots...) stay unmapped.
// - db.openapi.include { issue: true } (entity names, singular): only the issues' routes are made; and
//   db.openapi.ignoreRoutes drops its writes (POST and PUT /issues, PUT and DELETE /issues/{id}), which leaves
//   GET /issues/, GET /issues/{id} and the GETs of its relations (repository, milestone, author): read-only without
//   an `authorization` block, whose hook would run on every request. OpenAPI documentation stays at /documentation.
// - db.limit { default: 10, max: 100 }: its defaults written out; a page of 100 is the most it allows (101 is a 500).
// - watch false: no file watcher.
//
// Process. `node <dir>/node_modules/@platformatic/db/db.mjs start -c <config>` (the package's `plt-db` bin, without
// the `platformatic` / `wattpm` runtime): one process serving in its main thread (@platformatic/service's start.js
// builds a Fastify server in-process; no worker threads, no child processes); `pid` is that process, so its CPU is
// all of /proc/<pid>/stat. Its logger writes to stdout; with stdout not a TTY it does not start pino-pretty's worker
// thread. Its stdout and stderr are read into a small tail, printed only when it fails to start. stop() sends
// SIGTERM (close-with-grace closes the server) and waits for the exit, SIGKILL after 10 s.
//
// The request (PEER_ISSUES_PAGE). Our `GET /api/v0/issues/?limit=100` orders by `-created_at,-updated_at` then the id
// (src/api/v0/issues/issues.queries.ts, ordering.ts: the tie-breaker follows the last term's direction), i.e.
// ORDER BY created_at DESC, updated_at DESC, id DESC, gives 100 items of title, state, url, created_at, updated_at
// and a total count. Platformatic's list (sql-openapi lib/shared.js): `orderby.<camelCaseField>=asc|desc`, applied in
// the order of the query string; `limit`; `totalCount=true` puts the count in X-Total-Count (a second query,
// SELECT COUNT(*), unless the page is short); `fields=` a comma-separated list of the columns to select (camelCase),
// here the five columns of our items, so that both answers carry the same records (theirs a bare JSON array).
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Peer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where the peer is installed, outside the project's dependencies. */
export const PEER_DIR = path.join(ROOT, 'node_modules', '.cache', 'cds-bench-peer');
const PACKAGE = '@platformatic/db';
const VERSION_RANGE = '~2.61.0';
const STARTUP_MS = 60_000;
const STOP_MS = 10_000;
const TAIL_BYTES = 4_000;

/** The peer's request that matches our `GET /api/v0/issues/?limit=100`: see the comment at the top. */
export const PEER_ISSUES_PAGE =
  '/issues/?limit=100&totalCount=true&orderby.createdAt=desc&orderby.updatedAt=desc&orderby.id=desc' +
  '&fields=title,state,url,createdAt,updatedAt';

function say(line: string): void {
  process.stderr.write(`peer: ${line}\n`);
}

function packageDir(): string {
  return path.join(PEER_DIR, 'node_modules', ...PACKAGE.split('/'));
}

async function installedVersion(): Promise<string | undefined> {
  try {
    const json = JSON.parse(await fs.readFile(path.join(packageDir(), 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof json.version === 'string' ? json.version : undefined;
  } catch {
    return undefined;
  }
}

/** Installs the peer unless 2.61.x is already there; false (said on stderr) when it cannot. */
async function install(): Promise<boolean> {
  if ((await installedVersion())?.startsWith('2.61.')) return true;
  await fs.mkdir(PEER_DIR, { recursive: true });
  const manifest = { name: 'cds-bench-peer', private: true, dependencies: { [PACKAGE]: VERSION_RANGE } };
  await fs.writeFile(path.join(PEER_DIR, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  const log = path.join(PEER_DIR, 'install.log');
  say(`installing ${PACKAGE}@${VERSION_RANGE} into ${path.relative(ROOT, PEER_DIR)} (once; output in install.log)`);
  const started = Date.now();
  const out = await fs.open(log, 'w');
  try {
    const code = await new Promise<number | string>((resolve) => {
      const child = spawn('npm', ['install', '--prefix', PEER_DIR, '--no-audit', '--no-fund'], {
        cwd: PEER_DIR,
        stdio: ['ignore', out.fd, out.fd],
      });
      child.once('error', (err) => resolve(err.message));
      child.once('exit', (status, signal) => resolve(status ?? signal ?? 'killed'));
    });
    if (code !== 0) {
      say(`npm install failed (${code}), see ${log}`);
      return false;
    }
  } finally {
    await out.close();
  }
  const version = await installedVersion();
  if (!version?.startsWith('2.61.')) {
    say(`npm install gave ${PACKAGE} ${version ?? 'nothing'}, not 2.61.x`);
    return false;
  }
  say(`installed ${PACKAGE} ${version} in ${Math.round((Date.now() - started) / 1000)} s`);
  return true;
}

function config(databaseUrl: string, port: number) {
  return {
    $schema: 'https://schemas.platformatic.dev/@platformatic/db/2.61.0.json',
    server: { hostname: '127.0.0.1', port, logger: { level: 'warn' } },
    db: {
      connectionString: databaseUrl,
      poolSize: 10,
      schemalock: false,
      graphql: false,
      events: false,
      cache: false,
      autoTimestamp: false,
      include: { issues: true, milestones: true, repositories: true, members: true, organizations: true },
      openapi: {
        include: { issue: true },
        ignoreRoutes: [
          { method: 'POST', path: '/issues' },
          { method: 'PUT', path: '/issues' },
          { method: 'PUT', path: '/issues/{id}' },
          { method: 'DELETE', path: '/issues/{id}' },
        ],
      },
      limit: { default: 10, max: 100 },
    },
    watch: false,
  };
}

/**
 * Installs Platformatic DB 2.61 once into node_modules/.cache/cds-bench-peer, then starts it on 127.0.0.1:port over
 * databaseUrl, exposing only the `issues` table read-only (as far as its config allows). Resolves once GET /issues
 * answers 200. Returns undefined (with a line on stderr saying why) when it cannot be installed or started, so that
 * the bench goes on without the peer row.
 */
export async function startPeer(databaseUrl: string, port: number): Promise<Peer | undefined> {
  try {
    if (!(await install())) return undefined;
  } catch (err) {
    say(`cannot install ${PACKAGE}: ${(err as Error).message}`);
    return undefined;
  }

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-bench-peer-'));
  const file = path.join(dir, 'platformatic.db.json');
  await fs.writeFile(file, JSON.stringify(config(databaseUrl, port), null, 2) + '\n', { mode: 0o600 });

  const child = spawn(process.execPath, [path.join(packageDir(), 'db.mjs'), 'start', '-c', file], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-TAIL_BYTES);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (err) => {
      keep(Buffer.from(err.message));
      exited = true;
      resolve();
    });
  });
  // Should the bench end without stop(), the peer ends with it.
  const orphan = () => child.kill('SIGKILL');
  process.once('exit', orphan);

  const stop = async () => {
    process.removeListener('exit', orphan);
    if (!exited) {
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
      child.kill('SIGTERM');
      await exit;
      clearTimeout(timer);
    }
    await fs.rm(dir, { recursive: true, force: true });
  };

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + STARTUP_MS;
  let last = 'no answer';
  while (!exited && Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/issues/?limit=1`);
      await res.arrayBuffer();
      if (res.status === 200) {
        if (child.pid === undefined) break;
        return { url, pid: child.pid, stop };
      }
      last = `status ${res.status}`;
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const why = exited
    ? `exited (${child.exitCode ?? child.signalCode ?? 'error'})`
    : `gave ${last} for ${STARTUP_MS / 1000} s`;
  await stop();
  say(`Platformatic DB did not start: ${why}${tail ? `; its last output:\n${tail.trimEnd()}` : ''}`);
  return undefined;
}
