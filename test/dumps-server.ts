// A server process of the dump tests, on the engine of the run: the embedded database in a data folder of its own
// (its dumps in DATA_DIR/dumps), or a test database of the PostgreSQL server with a DUMPS_DIR of its own; and a key.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createTestDb, seedDataDir, serverUrl, type TestDatabase } from './helpers.ts';
import { exited, freePort, runCli, startServer, waitFor200 } from './process.ts';
import type { SourceDump } from '../src/data/import/dumps/dumps.source.ts';

export interface DumpsServer {
  base: string;
  /** The environment of the server, for `cds` commands on its database. */
  env: Record<string, string>;
  key: string;
  dumpsDir: string;
  get(url: string, headers?: Record<string, string>, method?: string): Promise<Response>;
  /** The output of the server process so far. */
  output(): string;
  stop(): Promise<void>;
}

export async function startDumpsServer(
  name: string,
  { bundled, env: extra = {} }: { bundled: boolean; env?: Record<string, string> },
): Promise<DumpsServer> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), `cds-${name}-`));
  let database: TestDatabase | undefined;
  const env: Record<string, string> = {
    DATA_DIR: path.join(tmp, 'data'),
    REST_AUTH: 'required',
    RATE_LIMIT_PER_SECOND: '1000000',
    AUTO_IMPORT: 'false',
    ...extra,
  };
  if (serverUrl) {
    database = await createTestDb({ importBundled: bundled });
    env.DATABASE_URL = database.url!;
    env.DUMPS_DIR = path.join(tmp, 'dumps');
  } else {
    await seedDataDir(env.DATA_DIR!, bundled ? 'bundled' : 'migrated');
  }
  const port = await freePort();
  const server = startServer({ ...env, PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/status/`, 120_000);
  const created = await runCli(['users', 'create', 'dumper', '--key', name], env);
  if (created.code !== 0) throw new Error(`cds users create: ${created.stderr}`);
  const key = created.stdout.trim();
  return {
    base,
    env,
    key,
    dumpsDir: env.DUMPS_DIR ?? path.join(env.DATA_DIR!, 'dumps'),
    // A low rate limit (the source of the seeding tests) is waited out.
    async get(url, headers = {}, method = 'GET') {
      for (;;) {
        const res = await fetch(`${base}${url}`, { method, headers: { 'x-api-key': key, ...headers } });
        if (res.status !== 429) return res;
        await res.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    },
    output: () => server.output(),
    async stop() {
      server.kill('SIGTERM');
      await exited(server);
      await database?.drop();
      await fs.rm(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * Every resource the service dumps, written out here rather than read from src/: the manifest is checked against it.
 * All are lists of /api/v0/ of their own but snapshot-releases (a snapshot's releases).
 */
export const DUMPED_RESOURCES = [
  'chapters',
  'committees',
  'events',
  'projects',
  'sponsors',
  'snapshots',
  'snapshot-releases',
  'organizations',
  'members',
  'repositories',
  'issues',
  'labels',
  'milestones',
  'releases',
  'deleted',
];

export async function manifestOf(server: DumpsServer): Promise<SourceDump[]> {
  const res = await server.get('/api/v0/dumps/');
  if (res.status !== 200) throw new Error(`manifest: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { items: SourceDump[] }).items;
}

/** A dump's lines, parsed: `{params, record}`; and the file's bytes. */
export async function downloadDump(
  server: DumpsServer,
  item: SourceDump,
): Promise<{ bytes: Buffer; lines: string[]; response: Response }> {
  const response = await server.get(item.url);
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = response.status === 200 ? zlib.gunzipSync(bytes).toString('utf8') : '';
  return { bytes, lines: text.split('\n').filter(Boolean), response };
}

/** Builds the dumps now (`cds dumps build`, inside the server on the embedded database). */
export async function buildNow(server: DumpsServer): Promise<void> {
  const built = await runCli(['dumps', 'build', '--json'], server.env);
  if (built.code !== 0) throw new Error(`cds dumps build: ${built.stderr}`);
}
