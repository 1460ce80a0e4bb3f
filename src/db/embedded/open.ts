// The embedded database (no DATABASE_URL): PGlite in a worker thread (pglite-host.ts, restarted after a crash by
// pglite-supervisor.ts), its data folder locked for one process (data-dir.ts), reached through one pg connection.
import pg from 'pg';
import type { KyselyConfig } from 'kysely';
import { kyselyOver } from '../migration-lock.ts';
import type { Database, Db, OpenOptions } from '../database.ts';
import { boundedPool, survivePoolErrors } from '../pools.ts';
import type { PgliteWorker } from './pglite-host.ts';
import { PgliteSupervisor } from './pglite-supervisor.ts';
import { lockDataDir, type DataDirLock } from './data-dir.ts';

export async function openEmbeddedDatabase(options: OpenOptions): Promise<Database> {
  const dataDir = options.loadDataDir ? 'memory://' : (options.dataDir ?? 'memory://');
  // One process at a time in a data folder: two PGlite instances writing the same files corrupt them.
  const lock = dataDir && !dataDir.startsWith('memory://') ? await lockDataDir(dataDir) : undefined;
  try {
    return await openPglite(options, dataDir, lock);
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

/** The worker thread in place of an embedded database (fault tests end it to see what a crash does). */
export function embeddedWorker(database: Database): PgliteWorker | undefined {
  // Not `instanceof`: under `npm test` a test file may be handed a database opened by another file's bundle (its own
  // copy of this module and of PgliteSupervisor, test/spare-db.ts; test/runner/README.md). PgliteSupervisor is the only
  // EmbeddedHealth.
  return (database.embedded as PgliteSupervisor | undefined)?.current;
}

async function openPglite(options: OpenOptions, dataDir: string, lock: DataDirLock | undefined): Promise<Database> {
  const { loadDataDir } = options;
  const worker = await PgliteSupervisor.open(
    { dataDir, sharedBuffersMb: options.sharedBuffersMb, ...(loadDataDir ? { loadDataDir } : {}) },
    options.restart,
  );
  const pool = embeddedPool(worker);
  const db = kyselyOver(pool, options.log);
  const database: Database = {
    db,
    // List queries wait for the one session in the same queue as every other query, but at most `queueLength` of
    // them: one more is refused at once (503 with Retry-After) instead of holding its request behind the others.
    ...(options.lists ? { lists: kyselyOver(boundedPool(pool, 1, options.lists.queueLength), options.log) } : {}),
    kind: 'pglite',
    embedded: worker,
    dumpDataDir: () => worker.dumpDataDir(),
    async close() {
      try {
        await db.destroy();
        await worker.close();
      } finally {
        await lock?.release();
      }
    },
  };
  return database;
}

/**
 * A connection pool to the embedded database. One connection: PGlite has one session. A transaction holds it until
 * it ends, so other queries wait in the pool's queue instead of running inside someone else's transaction. A client
 * whose worker died is dropped (its socket is destroyed); the next one connects to the worker in place.
 */
export function embeddedDb(worker: PgliteSupervisor, log?: KyselyConfig['log']): Db {
  return kyselyOver(embeddedPool(worker), log);
}

function embeddedPool(worker: PgliteSupervisor): pg.Pool {
  const pool = new pg.Pool({ max: 1, stream: () => worker.socket() });
  survivePoolErrors(pool);
  return pool;
}
