// Test databases: every test file gets its own, dropped afterwards, so runs never share state.
// With DATABASE_URL set (CI's second pass) it is a fresh database on that PostgreSQL server;
// otherwise an in-memory PGlite, loaded from a template (see pgliteTemplate below).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { importDataset } from '../src/data/import.ts';
import { openDatabase, pgliteDir, type Database } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

export interface TestDatabase extends Database {
  /** The connection string of the test database, when it is a PostgreSQL server. */
  readonly url: string | undefined;
  /** Closes the connections and drops the database. */
  drop(): Promise<void>;
}

export const serverUrl = process.env.DATABASE_URL || undefined;

export async function createTestDb(
  options: { migrate?: boolean; importBundled?: boolean } = {},
): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  if (!serverUrl) {
    const database = migrate
      ? await openDatabase({ loadDataDir: await pgliteTemplate(options.importBundled ? 'bundled' : 'migrated') })
      : await openDatabase({ dataDir: 'memory://' });
    return { ...database, url: undefined, drop: () => database.close() };
  }
  const name = `cds_test_${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 5 });
  if (migrate) await migrateToLatest(database.db);
  if (options.importBundled) await importDataset(database.db);
  return {
    ...database,
    url: url.toString(),
    async drop() {
      await database.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Gives DATA_DIR an embedded database that starts migrated (the template's data folder, unpacked there; `bundled`:
 * with the bundled data too), for the tests of `cds` and of a server that are not about a first start: it saves an
 * initdb (about 4.5 s of CPU), the migrations (and the import).
 * On the PostgreSQL pass the commands use DATABASE_URL and nothing is written.
 */
export async function seedDataDir(dataDir: string, kind: Template = 'migrated'): Promise<void> {
  if (serverUrl) return;
  const tarball = new Uint8Array(await (await pgliteTemplate(kind)).arrayBuffer());
  const target = pgliteDir(dataDir);
  await fs.mkdir(target, { recursive: true });
  // PGlite's dump is a plain tar of its data folder (member names start with `/`, which tar strips).
  const untar = spawnSync('tar', ['-xf', '-', '-C', target], { input: tarball, encoding: 'utf8' });
  if (untar.error || untar.status !== 0)
    throw new Error(`tar could not unpack the test template: ${untar.error?.message ?? untar.stderr}`);
}

/** Runs one statement on the server of DATABASE_URL (CREATE or DROP DATABASE). */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

// A new PGlite runs initdb (about 2.5 s of CPU) and then the migrations; the bundled import adds about 2 s.
// Instead, the first test database of a run is built the slow way, its data folder dumped to a tarball in
// the temporary folder, and every later one (in any test file of the run) is loaded from that tarball
// (about 1 s). The tarball's name carries a digest of everything it depends on — the sources, the bundled
// data, the installed packages — and the day, so a change to any of them (or a new day: imports date
// their snapshots) builds a new one. Each test database is still its own: nothing is shared but the start.
type Template = 'migrated' | 'bundled';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// One folder per checkout: two checkouts on one machine (their sources differ) do not delete each other's.
const TEMPLATE_DIR = path.join(
  os.tmpdir(),
  'cds-test-templates',
  crypto.createHash('sha256').update(ROOT).digest('hex').slice(0, 12),
);
// Kept for the whole process: under `npm test` a worker process runs several test files, each a bundle with its
// own copy of this module, and the tarball need not be read again for each.
const templates: Map<Template, Promise<Blob>> = ((globalThis as { [key: symbol]: unknown })[
  Symbol.for('cds-test-templates')
] ??= new Map()) as Map<Template, Promise<Blob>>;

function templateKey(): string {
  const hash = crypto.createHash('sha256');
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const { size, mtimeMs } = statSync(file);
      hash.update(`${file}\0${size}\0${mtimeMs}\n`);
    }
  };
  visit(path.join(ROOT, 'src'));
  visit(path.join(ROOT, 'data'));
  const lock = statSync(path.join(ROOT, 'package-lock.json'));
  hash.update(`${lock.size}\0${lock.mtimeMs}\0${new Date().toISOString().slice(0, 10)}`);
  return hash.digest('hex').slice(0, 16);
}

async function buildTemplate(kind: Template): Promise<Blob> {
  const file = path.join(TEMPLATE_DIR, `${kind}-${templateKey()}.tar`);
  try {
    return new Blob([await fs.readFile(file)]);
  } catch {
    // not built yet in this run: build it
  }
  const database = await openDatabase({ dataDir: 'memory://' });
  try {
    await migrateToLatest(database.db);
    if (kind === 'bundled') await importDataset(database.db);
    const tarball = await database.dumpDataDir!();
    // Written under a name of its own, then renamed: a test file starting at the same time reads all or nothing.
    await fs.mkdir(TEMPLATE_DIR, { recursive: true });
    const partial = `${file}.${process.pid}.partial`;
    await fs.writeFile(partial, new Uint8Array(await tarball.arrayBuffer()));
    await fs.rename(partial, file);
    // Templates of other sources (an earlier day, an edit) are of no further use.
    for (const old of await fs.readdir(TEMPLATE_DIR)) {
      if (old.startsWith(`${kind}-`) && old.endsWith('.tar') && path.join(TEMPLATE_DIR, old) !== file)
        await fs.rm(path.join(TEMPLATE_DIR, old), { force: true });
    }
    return tarball;
  } finally {
    await database.close();
  }
}

/** The template's tarball, for a new in-memory PGlite: migrated, and with the bundled data when asked. */
function pgliteTemplate(kind: Template): Promise<Blob> {
  let template = templates.get(kind);
  if (!template) {
    template = buildTemplate(kind);
    templates.set(kind, template);
    template.catch(() => templates.delete(kind));
  }
  return template;
}
