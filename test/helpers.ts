// Test databases: every test file gets its own, dropped afterwards, so runs never share state.
// With DATABASE_URL set (CI's second pass) it is a fresh database on that PostgreSQL server (under `npm test` a copy
// of a template database of the run, see serverTemplate below); otherwise an in-memory PGlite, loaded from a
// template (see pgliteTemplate below).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type KyselyConfig } from 'kysely';
import pg from 'pg';
import { importDataset } from '../src/data/import/dataset.import.ts';
import { openDatabase, pgliteDir, type Database, type ListBudget } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { noteFresh, recycle, takeSpare } from './spare-db.ts';

export interface TestDatabase extends Database {
  /** The connection string of the test database, when it is a PostgreSQL server. */
  readonly url: string | undefined;
  /** Closes the connections and drops the database. */
  drop(): Promise<void>;
}

export const serverUrl = process.env.DATABASE_URL || undefined;

/**
 * The `skip` of the files about the embedded database alone, whose processes blank DATABASE_URL (childEnv): the
 * data folder's lock, the admin channel, signals to a server, `.env`, `--wait-for-server` and the README's quick start.
 * They would run the same processes on the same embedded database in CI's PostgreSQL pass: they run in the PGlite pass
 * only, as the tests that start a server of their own run in the PostgreSQL pass only (docs/decisions.md, Tests).
 */
export const EMBEDDED_PASS_ONLY: string | false = serverUrl
  ? "about the embedded database alone (its processes blank DATABASE_URL): runs in CI's PGlite pass"
  : false;

/**
 * The options of the tests' own opens of an embedded database: PGLITE_SHARED_BUFFERS_MB as the service reads it
 * (test/runner/run.js sets 16 for `npm test`: PGlite zeroes its buffers at every start, and 128 MB of them were half of
 * an open's CPU; the tests' databases are small). Unset (a file run alone): PostgreSQL's default.
 */
export const EMBEDDED = { sharedBuffersMb: Number(process.env.PGLITE_SHARED_BUFFERS_MB) || undefined };

export async function createTestDb(
  options: {
    migrate?: boolean;
    importBundled?: boolean;
    /** Kysely's query log, to capture the SQL the app sends (such a database is not kept for the next file). */
    log?: KyselyConfig['log'];
    /** Embedded database only: open it with a list budget (`Database.lists`, its bounded queue). */
    lists?: ListBudget;
  } = {},
): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  const log = options.log ? { log: options.log } : {};
  if (!serverUrl) {
    if (migrate && !options.importBundled && !options.log && !options.lists) {
      // The worker process's kept database (test/spare-db.ts), emptied and checked, or a new one from the template.
      let database = takeSpare();
      if (!database) {
        database = await openDatabase({ ...EMBEDDED, loadDataDir: (await pgliteTemplate('migrated')).tarball });
        await noteFresh(database);
      }
      const opened = database;
      return { ...opened, url: undefined, drop: () => recycle(opened) };
    }
    const database = migrate
      ? await openDatabase({
          ...EMBEDDED,
          loadDataDir: (await pgliteTemplate(options.importBundled ? 'bundled' : 'migrated')).tarball,
          ...log,
          ...(options.lists ? { lists: options.lists } : {}),
        })
      : await openDatabase({ ...EMBEDDED, dataDir: 'memory://', ...log });
    return { ...database, url: undefined, drop: () => database.close() };
  }
  const name = `cds_test_${crypto.randomBytes(6).toString('hex')}`;
  const template = migrate ? await serverTemplate(options.importBundled ? 'bundled' : 'migrated') : undefined;
  await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  await adminQuery(NO_COMMIT_WAIT(name));
  // Reads as named prepared statements, as the server opens its serving pools (DATABASE_PREPARED_STATEMENTS).
  const database = await openDatabase({
    databaseUrl: databaseUrl(name),
    poolSize: 5,
    preparedStatements: true,
    ...log,
  });
  if (migrate && !template) await migrateToLatest(database.db);
  if (options.importBundled && !template) await importDataset(database.db);
  return {
    ...database,
    url: databaseUrl(name),
    async drop() {
      await database.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Gives DATA_DIR an embedded database that starts migrated (the template's data folder, unpacked there; `bundled`:
 * with the bundled data too; `empty`: initdb'd but not migrated), for the tests of `cds` and of a server that are not
 * about a first start: it saves an initdb (about 4.5 s of CPU), the migrations (and the import).
 * On the PostgreSQL pass too: servers and commands started without DATABASE_URL (childEnv blanks it) use this folder;
 * those given DATABASE_URL leave it unused.
 */
export async function seedDataDir(dataDir: string, kind: Template = 'migrated'): Promise<void> {
  const template = pgliteTemplate(kind);
  const target = pgliteDir(dataDir);
  await fs.mkdir(target, { recursive: true });
  // PGlite's dump is a plain tar of its data folder (member names start with `/`, which tar strips). tar reads the
  // template's file itself: sent through a pipe, its ~43 MB took ~0.5 s of this process's CPU and blocked it.
  const { file, tarball } = await template;
  const untar = existsSync(file)
    ? spawnSync('tar', ['-xf', file, '-C', target], { encoding: 'utf8' })
    : // (its file replaced meanwhile: the run crossed midnight, or the sources changed)
      spawnSync('tar', ['-xf', '-', '-C', target], {
        input: new Uint8Array(await tarball.arrayBuffer()),
        encoding: 'utf8',
      });
  if (untar.error || untar.status !== 0)
    throw new Error(`tar could not unpack the test template: ${untar.error?.message ?? untar.stderr}`);
}

/**
 * A test database on the server commits without waiting for its WAL to reach the disk (`synchronous_commit = off`, set
 * on the database, so that every session of it has it: the tests' pools, and the servers and commands they start with
 * its address). What a commit makes visible is the same; only a crash of the PostgreSQL server could lose the last
 * commits, and no test crashes the shared server (those that stop one start their own). On this machine a commit
 * waited ~1.6 ms for the disk (500 single-row inserts: 1.27 s against 0.47 s), and the PostgreSQL pass commits
 * tens of thousands of times. (A copy made with TEMPLATE does not inherit the setting: each database gets it.)
 */
const NO_COMMIT_WAIT = (name: string) => `ALTER DATABASE ${name} SET synchronous_commit = off`;

function databaseUrl(name: string): string {
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

// On the PostgreSQL server, under `npm test` (test/runner/run.js, CDS_TEST_RUN set: its pid): the first test database of each
// kind in a run is migrated (and loaded with the bundled data) as a database of its own, `cds_template_<run>_<kind>`,
// and every later one is a copy of it (CREATE DATABASE … TEMPLATE: ~0.1 s instead of ~0.4 s of migrations, ~1 s
// with the import). test/runner/run.js drops them at the end of the run. Each test database is still its own.
// Run alone (`node --import tsx --test`), nothing drops them: each database is migrated the old way.
const serverTemplates: Map<Template, Promise<string | undefined>> = ((globalThis as { [key: symbol]: unknown })[
  Symbol.for('cds-test-server-templates')
] ??= new Map()) as Map<Template, Promise<string | undefined>>;

/** The name of the run's template database on the server, built by the first caller; undefined when run alone. */
function serverTemplate(kind: 'migrated' | 'bundled'): Promise<string | undefined> {
  const run = process.env.CDS_TEST_RUN;
  if (!run || !/^\d+$/.test(run)) return Promise.resolve(undefined);
  let template = serverTemplates.get(kind);
  if (!template) {
    template = buildServerTemplate(`cds_template_${run}_${kind}`, kind); // test/runner/run.js drops them by that name
    serverTemplates.set(kind, template);
    template.catch(() => serverTemplates.delete(kind));
  }
  return template;
}

async function buildServerTemplate(name: string, kind: Template): Promise<string> {
  // The worker processes of a run race for it: each that finds none builds one under a name of its own, then
  // renames it (atomic); a loser drops its copy. Nobody stays connected to it, as CREATE DATABASE … TEMPLATE needs.
  const exists = async () => (await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  if (await exists()) return name;
  const building = `cds_test_${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${building}`);
  await adminQuery(NO_COMMIT_WAIT(building));
  try {
    const database = await openDatabase({ databaseUrl: databaseUrl(building), poolSize: 1 });
    try {
      await migrateToLatest(database.db);
      if (kind === 'bundled') await importDataset(database.db);
    } finally {
      await database.close();
    }
    await adminQuery(`ALTER DATABASE ${building} RENAME TO ${name}`);
  } catch (error) {
    await adminQuery(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    // Another worker of the run renamed its copy first: use that one.
    if ((error as { code?: string }).code === '42P04' && (await exists())) return name;
    throw error;
  }
  return name;
}

/** Runs one statement on the server of DATABASE_URL (CREATE or DROP DATABASE, a look at the catalog). */
export async function adminQuery(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await client.query(text, values);
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
type Template = 'migrated' | 'bundled' | 'empty';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// One folder per checkout: two checkouts on one machine (their sources differ) do not delete each other's.
const TEMPLATE_DIR = path.join(
  os.tmpdir(),
  'cds-test-templates',
  crypto.createHash('sha256').update(ROOT).digest('hex').slice(0, 12),
);
// Kept for the whole process: under `npm test` a worker process runs several test files, each a bundle with its
// own copy of this module, and the tarball need not be read again for each.
const templates: Map<Template, Promise<PgliteTemplate>> = ((globalThis as { [key: symbol]: unknown })[
  Symbol.for('cds-test-templates')
] ??= new Map()) as Map<Template, Promise<PgliteTemplate>>;

/** A template's tarball, and the file it was read from or saved to. */
interface PgliteTemplate {
  file: string;
  tarball: Blob;
}

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
  // The lock file's content, not its time: quick-start.test's `npm install` rewrites it unchanged.
  hash.update(readFileSync(path.join(ROOT, 'package-lock.json')));
  // And how this file builds them.
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  hash.update(`\0${new Date().toISOString().slice(0, 10)}`);
  return hash.digest('hex').slice(0, 16);
}

async function buildTemplate(kind: Template): Promise<PgliteTemplate> {
  const key = templateKey();
  const file = templateFile(kind, key);
  try {
    return { file, tarball: new Blob([await fs.readFile(file)]) };
  } catch {
    // not built yet in this run: build it
  }
  const database = await openDatabase({ ...EMBEDDED, dataDir: 'memory://' });
  try {
    const dump = async () => withoutOtherDatabases(database);
    // The initdb'd database on the way is the `empty` template: kept as well, it costs a dump instead of an initdb.
    if (kind !== 'empty' && !existsSync(templateFile('empty', key))) await saveTemplate('empty', key, await dump());
    if (kind !== 'empty') await migrateToLatest(database.db);
    if (kind === 'bundled') await importDataset(database.db);
    const tarball = await dump();
    await saveTemplate(kind, key, tarball);
    return { file, tarball };
  } finally {
    await database.close();
  }
}

/**
 * The database's dump without the files of initdb's other databases (template0 and template1, ~8 MB of catalogs
 * each): nothing of the service or its tests connects to them or copies them (PGlite has one session, on its own
 * database), and every open of a template unpacks the whole tarball into memory. Their folders stay, empty. Measured
 * on the CI machine: an open from the migrated template took ~0.71 s of CPU with them, ~0.54 s without.
 */
async function withoutOtherDatabases(database: Database): Promise<Blob> {
  const { rows } = await sql<{
    oid: number;
  }>`SELECT oid::int AS oid FROM pg_database WHERE datname <> current_database()`.execute(database.db);
  const dropped = rows.map(({ oid }) => `/base/${oid}/`);
  const tar = new Uint8Array(await (await database.dumpDataDir!()).arrayBuffer());
  const kept: Uint8Array[] = [];
  let removed = 0;
  const text = (from: number, length: number) =>
    new TextDecoder().decode(tar.subarray(from, from + length)).replace(/\0.*$/s, '');
  // A ustar archive: 512-byte headers (name at 0, size in octal at 124, name prefix at 345), each followed by its
  // data padded to 512 bytes; two zero blocks end it. PGlite's names are short: no extended (pax) headers.
  let at = 0;
  while (at + 512 <= tar.length && tar[at] !== 0) {
    const prefix = text(at + 345, 155);
    const name = prefix ? `${prefix}/${text(at, 100)}` : text(at, 100);
    const size = parseInt(text(at + 124, 12).trim() || '0', 8);
    const end = at + 512 + Math.ceil(size / 512) * 512;
    const type = String.fromCharCode(tar[at + 156]!);
    if (type === 'x' || type === 'g') throw new Error('unexpected pax header in a PGlite dump');
    const isFile = type === '0' || type === '\0';
    if (isFile && dropped.some((folder) => name.startsWith(folder) || name.startsWith(folder.slice(1)))) removed++;
    else kept.push(tar.subarray(at, end));
    at = end;
  }
  // Loud rather than slow: a PGlite whose dump this reading no longer understands.
  if (dropped.length > 0 && removed === 0) throw new Error(`no file of ${dropped.join(', ')} found in PGlite's dump`);
  kept.push(new Uint8Array(1024));
  return new Blob(kept);
}

const templateFile = (kind: Template, key: string) => path.join(TEMPLATE_DIR, `${kind}-${key}.tar`);

async function saveTemplate(kind: Template, key: string, tarball: Blob): Promise<void> {
  const file = templateFile(kind, key);
  // Written under a name of its own, then renamed: a test file starting at the same time reads all or nothing.
  await fs.mkdir(TEMPLATE_DIR, { recursive: true });
  const partial = `${file}.${process.pid}-${crypto.randomBytes(4).toString('hex')}.partial`;
  await fs.writeFile(partial, new Uint8Array(await tarball.arrayBuffer()));
  await fs.rename(partial, file);
  // Templates of other sources (an earlier day, an edit) are of no further use.
  for (const old of await fs.readdir(TEMPLATE_DIR)) {
    if (old.startsWith(`${kind}-`) && old.endsWith('.tar') && path.join(TEMPLATE_DIR, old) !== file)
      await fs.rm(path.join(TEMPLATE_DIR, old), { force: true });
  }
}

/**
 * The template's tarball and its file, for a new in-memory PGlite or a data folder: migrated (and with the bundled
 * data), or only initdb'd.
 */
function pgliteTemplate(kind: Template): Promise<PgliteTemplate> {
  let template = templates.get(kind);
  if (!template) {
    template = buildTemplate(kind);
    templates.set(kind, template);
    template.catch(() => templates.delete(kind));
  }
  return template;
}
