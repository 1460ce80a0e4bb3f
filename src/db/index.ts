// Opens the one database the service uses: a PostgreSQL server when DATABASE_URL is set,
// otherwise an embedded PGlite (PostgreSQL compiled to WASM) persisted under DATA_DIR, run in a worker thread
// (pglite-host.ts). Both go through node-postgres, so every query, type parser and migration is shared.
import pg from 'pg';
import type { Kysely, KyselyConfig } from 'kysely';
import type { DB } from './schema.ts';
import type { PgliteWorker } from './pglite-host.ts';
import { PgliteSupervisor, type EmbeddedHealth, type RestartOptions } from './pglite-supervisor.ts';
import { timestampParser } from './timestamps.ts';
import { kyselyOver } from './migration-lock.ts';
import type { PoolMode } from './pool-mode.ts';
import {
  boundedPool,
  closingTimedOut,
  openListPool,
  pingWithin,
  serverConnection,
  survivePoolErrors,
  type ListBudget,
} from './server-pools.ts';
import { lockDataDir, type DataDirLock } from './data-dir.ts';

// Where a data folder keeps its database: read by whoever opens one (startup, the tests, the benches).
export { pgliteDir } from './data-dir.ts';
export { ListQueueFullError, QUERY_TIMEOUT_MARGIN_MS, type ListBudget } from './server-pools.ts';

// `date` columns stay `YYYY-MM-DD` strings: turning them into Date objects would shift them by
// the process's time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

// timestamptz: read by position instead of through the driver's generic parser (see timestamps.ts).
/** The driver's own timestamptz parser, kept as the fallback (and as the reference of the tests). */
export const driverTimestampParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, timestampParser(driverTimestampParser));

export type Db = Kysely<DB>;
export type DbKind = 'postgres' | 'pglite';

export interface Database {
  readonly db: Db;
  /**
   * Where paged list queries run (listRoute), when they have a budget of their own: on a PostgreSQL
   * server a separate pool with a tighter statement timeout and a bounded queue (openListPool), so that
   * slow lists cannot take the connections of details, key checks and everything else; on the embedded database
   * its one session, with at most LIST_QUEUE_LENGTH list queries waiting for it. Unset: `db`.
   */
  readonly lists?: Db;
  readonly kind: DbKind;
  close(): Promise<void>;
  /** Embedded database only: a tarball of its data folder, for `loadDataDir` (the tests' templates). */
  dumpDataDir?(): Promise<Blob>;
  /** Embedded database only: the state of its worker thread (restarted after a crash, see pglite-supervisor.ts). */
  readonly embedded?: EmbeddedHealth;
  /**
   * PostgreSQL server only: `select 1` on a connection of the serving pool, rejected when no answer came within
   * `timeoutMs`, and then without keeping that connection (pingWithin). The readiness probe's check.
   */
  ping?(timeoutMs: number): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string | undefined;
  /** Folder of the embedded database; `memory://` keeps it in memory. */
  dataDir?: string | undefined;
  /** Embedded database only: start from this tarball of `dumpDataDir()` (in memory; tests' templates). */
  loadDataDir?: Blob;
  poolSize?: number;
  /**
   * PostgreSQL server only: cancel statements running longer than this (the serving pool sets it). The client stops
   * waiting for an answer QUERY_TIMEOUT_MARGIN_MS later (serverConnection).
   */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL server only: `transaction` behind a pooler in transaction mode (DATABASE_POOL_MODE, pool-mode.ts): no
   * start-up parameters, the statement timeout and the search's settings made per transaction. Default `session`.
   */
  poolMode?: PoolMode;
  /**
   * PostgreSQL server only, session mode: reads as named prepared statements (DATABASE_PREPARED_STATEMENTS,
   * prepared.ts). Default off: the serving pools turn it on (startup.ts).
   */
  preparedStatements?: boolean;
  /** Kysely's query log (bench/search.ts captures the SQL the app sends). */
  log?: KyselyConfig['log'];
  /**
   * Give list queries a budget of their own (`Database.lists`): on a PostgreSQL server a pool, timeout and queue of
   * their own; on the embedded database a bound on how many of them wait for its one session.
   */
  lists?: ListBudget;
  /** Embedded database only: the backoff of the worker's restarts (tests inject a clock). */
  restart?: RestartOptions;
  /** Embedded database only: PostgreSQL's shared_buffers in MB (PGLITE_SHARED_BUFFERS_MB); unset: 128 MB. */
  sharedBuffersMb?: number | undefined;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) {
    const mode = options.poolMode ?? 'session';
    // Named reads (prepared.ts), never through a pooler in transaction mode.
    const prepare = (options.preparedStatements ?? false) && mode === 'session';
    // No request may hold a connection for long; a cancelled statement becomes a 503.
    const connection = serverConnection(options.statementTimeoutMs, mode);
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      idleTimeoutMillis: 30_000,
      ...connection.config,
    });
    survivePoolErrors(pool);
    const db = kyselyOver(closingTimedOut(pool, connection.perTransaction, prepare), options.log);
    const ping = (timeoutMs: number) => pingWithin(pool, timeoutMs);
    if (!options.lists) return { db, kind: 'postgres', ping, close: () => db.destroy() };
    const lists = openListPool(options.databaseUrl, options.lists, mode, options.log, prepare);
    return {
      db,
      lists,
      kind: 'postgres',
      ping,
      close: async () => {
        await Promise.all([db.destroy(), lists.destroy()]);
      },
    };
  }

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
