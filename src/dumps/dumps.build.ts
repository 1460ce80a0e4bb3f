// Builds the dumps it is given (each resource's, from the registry: api/v0/resources.ts) into a folder: every record of each, streamed batch by batch from the database
// through gzip to a new file (memory does not grow with the table), its checksum computed on the way; files whose
// tables did not change since the last build are kept. The set is consistent: on a PostgreSQL server it is read in
// one repeatable-read snapshot (under a lock, so that one instance builds at a time); on the embedded database, whose
// one connection a long transaction would hold from every request, batches are separate statements and the build
// is done again (only the dumps whose tables moved) until no table it read changed while it ran.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import zlib from 'node:zlib';
import type { Database, Db } from '../db/index.ts';
import { readDataVersion } from '../announcements/counters.queries.ts';
import { createDatabaseId } from '../db/meta.queries.ts';
import { readTableVersions } from '../db/table-versions.queries.ts';
import { lastChangeId } from '../changes/change-log.queries.ts';
import {
  batchBoundaries,
  exportSnapshot,
  joinSnapshot,
  lockDumpBuilds,
  readBatch,
  readOnlySnapshot,
  tablesRead,
  type Batch,
} from './dumps.queries.ts';
import type { DumpSource } from './dump-source.ts';
import {
  DUMP_FORMAT,
  dumpFileName,
  readManifest,
  removeUnlisted,
  syncFile,
  temporaryPath,
  writeManifest,
  type StoredDump,
  type StoredManifest,
} from './dumps.files.ts';

export interface BuildOptions {
  database: Database;
  dir: string;
  /** Every dump, in the order of the manifest (api/v0/resources.ts, DUMPS). */
  dumps: readonly DumpSource[];
  /** Wait for another instance's build to end (`cds dumps build`) instead of giving up at once (the background). */
  wait?: boolean;
  signal?: AbortSignal;
  /** Records per statement; default 10,000 on a server, 2,000 on the embedded database (a request waits for one). */
  batchSize?: number;
  /** Compression level of gzip, 1–9 (default 1: see docs/decisions.md, dumps). */
  level?: number;
  /** PostgreSQL server only: connections reading batches at once, in one snapshot (default 2). */
  connections?: number;
}

export interface BuiltDump {
  resource: string;
  records: number;
  bytes: number;
  /** False when the file of the last build was kept (its tables had not changed). */
  built: boolean;
  ms: number;
}

export interface BuildReport {
  /** `locked`: another instance is building (nothing done); `built`: the folder holds the dumps of `dataVersion`. */
  outcome: 'built' | 'locked';
  dataVersion: number;
  items: BuiltDump[];
  records: number;
  durationMs: number;
}

/** How many times the embedded database's build is done again while the data keeps changing under it. */
const ATTEMPTS = 5;

/** The build under way in this process, per folder: `cds dumps build` through the admin channel waits for the server's. */
const running = new Map<string, Promise<unknown>>();

/** Builds the dumps into `options.dir`, one build at a time per folder in this process (and per database, by lock). */
export async function buildDumps(options: BuildOptions): Promise<BuildReport> {
  const dir = path.resolve(options.dir);
  for (let other = running.get(dir); other; other = running.get(dir)) await other.catch(() => undefined);
  const build = runBuild({ ...options, dir });
  running.set(dir, build);
  try {
    return await build;
  } finally {
    running.delete(dir);
  }
}

async function runBuild(options: BuildOptions & { dir: string }): Promise<BuildReport> {
  const started = performance.now();
  const { database, dir } = options;
  await fs.mkdir(dir, { recursive: true });
  const databaseId = await createDatabaseId(database.db);
  // Published before the lock is let go: the next build (another instance's) starts from this manifest.
  const build = async (dbs: Db[]) => {
    const built = await buildConsistent(dbs, options, databaseId);
    await writeManifest(dir, built.manifest);
    await removeUnlisted(dir, built.manifest);
    return built;
  };
  let result: { manifest: StoredManifest; items: BuiltDump[] } | undefined;
  if (database.kind === 'postgres') {
    result = await database.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        await readOnlySnapshot(trx);
        if (!(await lockDumpBuilds(trx, options.wait ?? false))) return undefined;
        // With read replicas, the records come from one that has replayed the newest data version (db/server/replicas.ts),
        // in a snapshot of its own, while the lock stays here; one that fails meanwhile leaves the build to the primary.
        const replica = database.replicas?.choose();
        if (replica) {
          const fromReplica = await readSnapshot(replica.database, options, build).catch((error: unknown) => {
            if (options.signal?.aborted) throw error;
            database.replicas!.failed(replica, error);
            database.replicas!.fellBack(replica);
            return undefined;
          });
          if (fromReplica) return fromReplica;
        }
        // More connections read in the same snapshot (its id exported): the batches of one dump at once.
        const snapshot = await exportSnapshot(trx);
        return withSnapshot(database, snapshot, (options.connections ?? 2) - 1, (helpers) => build([trx, ...helpers]));
      });
  } else {
    result = await build([database.db]);
  }
  const durationMs = Math.round(performance.now() - started);
  if (!result) return { outcome: 'locked', dataVersion: -1, items: [], records: 0, durationMs };
  const records = result.items.reduce((sum, item) => sum + item.records, 0);
  return { outcome: 'built', dataVersion: result.manifest.data_version, items: result.items, records, durationMs };
}

/** The build read in one repeatable-read snapshot of `source` (a read replica's database), on its connections. */
function readSnapshot<T>(source: Database, options: BuildOptions, build: (dbs: Db[]) => Promise<T>): Promise<T> {
  return source.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      await readOnlySnapshot(trx);
      const snapshot = await exportSnapshot(trx);
      return withSnapshot(source, snapshot, (options.connections ?? 2) - 1, (helpers) => build([trx, ...helpers]));
    });
}

/** The names of a dump's extra fields (dump-source.ts), in the order of its lines. */
export const extraFields = (source: DumpSource): string[] => Object.keys(source.extra?.properties ?? {});

const sameFields = (a: readonly string[] | undefined, b: readonly string[]) =>
  (a ?? []).length === b.length && b.every((name, i) => a![i] === name);

/** The dumps of one state of the data: built again (those whose tables moved) until nothing moved during a build. */
async function buildConsistent(
  dbs: Db[],
  options: BuildOptions & { dir: string },
  databaseId: string,
): Promise<{ manifest: StoredManifest; items: BuiltDump[] }> {
  const db = dbs[0]!;
  const previous = await readManifest(options.dir);
  // What may be kept: the files of the last build of this database in this format, and those of an earlier attempt.
  const kept = new Map<string, StoredDump>();
  if (previous && previous.format === DUMP_FORMAT && previous.database === databaseId)
    for (const item of previous.items) kept.set(item.resource, item);
  const written: string[] = [];
  try {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const before = await readTableVersions(db);
      const items: StoredDump[] = [];
      const report: BuiltDump[] = [];
      for (const source of options.dumps) {
        options.signal?.throwIfAborted();
        const started = performance.now();
        const tables = versionsOf(await tablesRead(db, source), before);
        const old = kept.get(source.resource);
        const reusable =
          old &&
          tables &&
          sameVersions(old.tables, tables) &&
          sameFields(old.extra_fields, extraFields(source)) &&
          (await exists(options.dir, old.file));
        const item = reusable ? old : await writeDump(dbs, source, options, tables);
        if (!reusable) written.push(item.file);
        kept.set(source.resource, item);
        items.push(item);
        report.push({
          resource: item.resource,
          records: item.records,
          bytes: item.bytes,
          built: !reusable,
          ms: Math.round(performance.now() - started),
        });
      }
      const dataVersion = await readDataVersion(db);
      // Before the tables' versions are read again: a change committed after this read moves one, and the build runs again.
      const lastChange = await lastChangeId(db);
      const after = await readTableVersions(db);
      if (sameVersions(Object.fromEntries(before), Object.fromEntries(after))) {
        const manifest: StoredManifest = {
          format: DUMP_FORMAT,
          database: databaseId,
          data_version: dataVersion,
          last_change_id: lastChange,
          built_at: new Date().toISOString(),
          items: items.map((item) => ({ ...item, data_version: dataVersion })),
        };
        return { manifest, items: report };
      }
    }
    throw new Error(`the data changed during each of ${ATTEMPTS} attempts to build the dumps`);
  } catch (error) {
    // Files of this build that no manifest will name.
    const listed = new Set(previous?.items.map((item) => item.file));
    await Promise.all(
      written.filter((file) => !listed.has(file)).map((file) => fs.rm(path.join(options.dir, file), { force: true })),
    );
    throw error;
  }
}

/** The versions of the tables a dump reads; null when one of them has none (never trusted: always built again). */
function versionsOf(tables: string[], versions: Map<string, number>): Record<string, number> | null {
  const picked: Record<string, number> = {};
  for (const table of tables) {
    const version = versions.get(table);
    if (version === undefined) return null;
    picked[table] = version;
  }
  return picked;
}

function sameVersions(a: Record<string, number> | null, b: Record<string, number>): boolean {
  if (!a) return false;
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}

async function exists(dir: string, file: string): Promise<boolean> {
  return fs.stat(path.join(dir, file)).then(
    () => true,
    () => false,
  );
}

/** The statements that join the first connection's snapshot, one connection each, held until `work` ends. */
async function withSnapshot<T>(
  database: Database,
  snapshot: string,
  count: number,
  work: (helpers: Db[]) => Promise<T>,
  helpers: Db[] = [],
): Promise<T> {
  if (helpers.length >= count) return work(helpers);
  return database.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      await joinSnapshot(trx, snapshot);
      return withSnapshot(database, snapshot, count, work, [...helpers, trx]);
    });
}

/**
 * The batches of a dump, in order. On one connection, each the next `size` keys of the key's table after the range of
 * the one before (found by the batch's statement); on several, the ranges between the boundaries of every `size`-th
 * key, read `connections.length` at once (in their order).
 */
async function* batchesOf(connections: Db[], source: DumpSource, size: number): AsyncGenerator<Batch> {
  if (connections.length === 1) {
    let after: string | undefined;
    for (;;) {
      const batch = await readBatch(connections[0]!, source, { after, limit: size });
      if (batch.records > 0) yield batch;
      if (batch.upTo === undefined) return;
      after = batch.upTo;
    }
  }
  const cuts = await batchBoundaries(connections[0]!, source, size);
  const pending: Promise<Batch>[] = [];
  for (let i = 0; i <= cuts.length; i++) {
    const read = readBatch(connections[i % connections.length]!, source, { after: cuts[i - 1], upTo: cuts[i] });
    // Awaited in order below; a failure meanwhile must not be an unhandled rejection.
    read.catch(() => undefined);
    pending.push(read);
    if (pending.length >= connections.length) yield await pending.shift()!;
  }
  while (pending.length > 0) yield await pending.shift()!;
}

/** One dump, read batch by batch into gzip and a new file, its checksum and size counted as the bytes go by. */
async function writeDump(
  connections: Db[],
  source: DumpSource,
  options: BuildOptions & { dir: string },
  tables: Record<string, number> | null,
): Promise<StoredDump> {
  const batchSize = options.batchSize ?? (options.database.kind === 'pglite' ? 2_000 : 10_000);
  const temporary = temporaryPath(options.dir);
  const hash = createHash('sha256');
  let bytes = 0;
  const gzip = zlib.createGzip({ level: options.level ?? 1 });
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const written = pipeline(gzip, count, createWriteStream(temporary));
  // A failure of the file is seen at the next write; meanwhile it must not be an unhandled rejection.
  written.catch(() => undefined);
  let records = 0;
  try {
    // The next batches are read while gzip compresses this one (in libuv's threads).
    for await (const batch of batchesOf(connections, source, batchSize)) {
      options.signal?.throwIfAborted();
      records += batch.records;
      if (!gzip.write(batch.text)) await Promise.race([once(gzip, 'drain'), written]);
    }
    gzip.end();
    await written;
    await syncFile(temporary);
    const sha256 = hash.digest('hex');
    const file = dumpFileName(source.resource, sha256);
    await fs.rename(temporary, path.join(options.dir, file));
    return {
      resource: source.resource,
      file,
      records,
      bytes,
      sha256,
      extra_fields: extraFields(source),
      data_version: 0,
      created_at: new Date().toISOString(),
      tables,
    };
  } catch (error) {
    gzip.destroy();
    await written.catch(() => undefined);
    await fs.rm(temporary, { force: true });
    throw error;
  }
}
