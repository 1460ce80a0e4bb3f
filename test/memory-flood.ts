// The floods of distinct requests of issue 41, shared by test/cache-memory.test.ts (scaled to seconds) and
// bench/memory.ts (at full size): members of distinct companies and issues of large bodies, seeded set-based on either
// engine, and the server as a process with a given heap and test/heap-probe.js preloaded, whose heap after a full
// collection is asked over its IPC channel.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, pgliteDir, type Database } from '../src/db/index.ts';
import { createTestDb, seedDataDir, serverUrl } from './helpers.ts';
import { childEnv, exited, freePort, ROOT, SERVER_ARGS, waitFor200 } from './process.ts';

export interface FloodData {
  /** Members `crowd1`…, each of its own company: `Company <n><company>`. */
  members: number;
  company: string;
  /** Issues `owasp/memory/1`… */
  issues: number;
  /** Their bodies' lengths, spread evenly between the two (a multiple of 32: md5 texts repeated). */
  body: readonly [number, number];
}

/** The first member's `updated_at`; member n's is n seconds later (windows of `updated_after`/`updated_before`). */
export const MEMBERS_FROM = Date.UTC(2020, 0, 1);

/** Set-based (INSERT … SELECT over generate_series): seconds for 200,000 members on either engine. */
export async function seedFlood(db: Database['db'], data: FloodData): Promise<void> {
  await sql`INSERT INTO members (github_id, login, company, created_at, updated_at)
    SELECT 900000 + g, 'crowd' || g, 'Company ' || g || ${data.company},
           ${new Date(MEMBERS_FROM)}::timestamptz + g * interval '1 second', ${new Date(MEMBERS_FROM)}::timestamptz + g * interval '1 second'
    FROM generate_series(1, ${data.members}::int) AS g`.execute(db);
  await sql`INSERT INTO repositories (github_id, owner_login, name, created_at, updated_at)
    VALUES (990001, 'owasp', 'memory', now(), now())`.execute(db);
  const [shortest, longest] = data.body.map((length) => Math.floor(length / 32));
  await sql`INSERT INTO issues (github_id, repository_id, number, title, body, state, created_at, updated_at)
    SELECT 990000 + g, (SELECT id FROM repositories WHERE github_id = 990001), g, 'Issue ' || g,
           repeat(md5(g::text), ${shortest}::int + (g * 7919) % (${longest! - shortest! + 1}::int)), 'open',
           now() - g * interval '1 minute', now() - g * interval '1 minute'
    FROM generate_series(1, ${data.issues}::int) AS g`.execute(db);
  await sql`ANALYZE members`.execute(db);
}

export interface FloodDatabase {
  /** DATA_DIR of the server: its embedded database, or unused beside DATABASE_URL. */
  dataDir: string;
  /** The PostgreSQL database's connection string, or undefined for the embedded one. */
  url: string | undefined;
  drop(): Promise<void>;
}

/** A fresh database, seeded: a new one on the PostgreSQL server of DATABASE_URL (dropped after), else a data folder. */
export async function floodDatabase(data: FloodData): Promise<FloodDatabase> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-memory-flood-'));
  const removeDir = () => fs.rm(dataDir, { recursive: true, force: true });
  if (serverUrl) {
    const database = await createTestDb();
    try {
      await seedFlood(database.db, data);
    } finally {
      await database.close();
    }
    return { dataDir, url: database.url, drop: async () => (await database.drop(), await removeDir()) };
  }
  await seedDataDir(dataDir);
  const embedded = await openDatabase({ dataDir: pgliteDir(dataDir) });
  try {
    await seedFlood(embedded.db, data);
  } finally {
    await embedded.close();
  }
  return { dataDir, url: undefined, drop: removeDir };
}

export interface FloodServer {
  process: ChildProcess;
  base: string;
  /** Its stdout and stderr so far. */
  output(): string;
  /** Its heap in use after a full collection (test/heap-probe.js); rejects if it died. */
  heapUsed(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The server as a user starts it (default CACHE_MEMORY_MB when `cacheMemoryMb` is not given), with a heap of `heapMb`,
 * keys optional and no rate limit. `root`: another checkout's server (the code before a fix) on the same database.
 */
export async function startFloodServer(options: {
  database: FloodDatabase;
  heapMb: number;
  cacheMemoryMb?: number;
  root?: string;
  logLevel?: string;
}): Promise<FloodServer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server =
    options.root === undefined || path.resolve(options.root) === ROOT
      ? SERVER_ARGS
      : ['--import', import.meta.resolve('tsx'), path.join(path.resolve(options.root), 'src/server.ts')];
  const probe = [
    `--max-old-space-size=${options.heapMb}`,
    '--expose-gc',
    '--import',
    path.join(ROOT, 'test/heap-probe.js'),
  ];
  const child = spawn(process.execPath, [...probe, ...server], {
    cwd: options.root ?? ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: childEnv({
      DATA_DIR: options.database.dataDir,
      DATABASE_URL: options.database.url,
      PORT: String(port),
      AUTO_IMPORT: 'false',
      REST_AUTH: 'optional',
      RATE_LIMIT_PER_SECOND: '1000000',
      CACHE_MEMORY_MB: options.cacheMemoryMb === undefined ? undefined : String(options.cacheMemoryMb),
      LOG_LEVEL: options.logLevel ?? 'error',
    }),
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const flood: FloodServer = {
    process: child,
    base,
    output: () => output,
    heapUsed: () =>
      new Promise((resolve, reject) => {
        const answer = (message: unknown) => {
          child.off('exit', died);
          resolve((message as { heapUsed: number }).heapUsed);
        };
        const died = () => {
          child.off('message', answer);
          reject(new Error(`the server died\n${output.slice(-3000)}`));
        };
        if (child.exitCode !== null || child.signalCode !== null) return died();
        child.once('message', answer);
        child.once('exit', died);
        child.send('heap');
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited(child);
    },
  };
  try {
    await waitFor200(`${base}/status/`, 120_000);
  } catch (error) {
    await flood.stop();
    throw new Error(`${String(error)}\n${output.slice(-3000)}`);
  }
  return flood;
}

/** An MCP `tools/call` of `get` (the JSON-RPC answer, not a stream). */
export function mcpGet(base: string, id: number, args: unknown): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get', arguments: args } }),
  });
}
