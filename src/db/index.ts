// Opens the one database the service uses: a PostgreSQL server when DATABASE_URL is set,
// otherwise an embedded PGlite (PostgreSQL compiled to WASM) persisted under DATA_DIR, run in a worker thread
// (pglite-host.ts). Both go through node-postgres, so every query, type parser and migration is shared.
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely';
import type { DB } from './schema.ts';
import type { PgliteWorker } from './pglite-host.ts';
import { PgliteSupervisor, type EmbeddedHealth, type RestartOptions } from './pglite-supervisor.ts';
import { timestampParser } from './timestamps.ts';

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
   * slow lists cannot take the connections of details, key checks and everything else. Unset: `db`.
   */
  readonly lists?: Db;
  readonly kind: DbKind;
  close(): Promise<void>;
  /** Embedded database only: a tarball of its data folder, for `loadDataDir` (the tests' templates). */
  dumpDataDir?(): Promise<Blob>;
  /** Embedded database only: the state of its worker thread (restarted after a crash, see pglite-supervisor.ts). */
  readonly embedded?: EmbeddedHealth;
}

export interface OpenOptions {
  databaseUrl?: string | undefined;
  /** Folder of the embedded database; `memory://` keeps it in memory. */
  dataDir?: string | undefined;
  /** Embedded database only: start from this tarball of `dumpDataDir()` (in memory; tests' templates). */
  loadDataDir?: Blob;
  poolSize?: number;
  /** PostgreSQL server only: cancel statements running longer than this (the serving pool sets it). */
  statementTimeoutMs?: number;
  /** Kysely's query log (bench/search.ts captures the SQL the app sends). */
  log?: KyselyConfig['log'];
  /** PostgreSQL server only: give list queries a pool of their own (`Database.lists`). */
  lists?: ListBudget;
  /** Embedded database only: the backoff of the worker's restarts (tests inject a clock). */
  restart?: RestartOptions;
  /** Embedded database only: PostgreSQL's shared_buffers in MB (PGLITE_SHARED_BUFFERS_MB); unset: 128 MB. */
  sharedBuffersMb?: number | undefined;
}

/** The budget of list queries on a PostgreSQL server (LIST_POOL_SIZE, LIST_STATEMENT_TIMEOUT_MS, LIST_QUEUE_LENGTH). */
export interface ListBudget {
  /** Connections, hence list queries running at once. */
  poolSize: number;
  /** A list statement running longer is cancelled: 503, and its connection is free again. */
  statementTimeoutMs: number;
  /** List queries waiting for a connection; one more is refused at once (503 with Retry-After). */
  queueLength: number;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      // No request may hold a connection for long; a cancelled statement becomes a 503.
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    });
    survivePoolErrors(pool);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: options.log });
    if (!options.lists) return { db, kind: 'postgres', close: () => db.destroy() };
    const lists = openListPool(options.databaseUrl, options.lists, options.log);
    return {
      db,
      lists,
      kind: 'postgres',
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
  // copy of this module and of PgliteSupervisor, test/spare-db.ts). PgliteSupervisor is the only EmbeddedHealth.
  return (database.embedded as PgliteSupervisor | undefined)?.current;
}

async function openPglite(options: OpenOptions, dataDir: string, lock: DataDirLock | undefined): Promise<Database> {
  const { loadDataDir } = options;
  const worker = await PgliteSupervisor.open(
    { dataDir, sharedBuffersMb: options.sharedBuffersMb, ...(loadDataDir ? { loadDataDir } : {}) },
    options.restart,
  );
  const db = embeddedDb(worker, options.log);
  const database: Database = {
    db,
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
  const pool = new pg.Pool({ max: 1, stream: () => worker.socket() });
  survivePoolErrors(pool);
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log });
}

/** Raised instead of queueing a list query behind `queueLength` others: a 503 (errors.ts). */
export class ListQueueFullError extends Error {
  readonly code = 'LIST_QUEUE_FULL';
  constructor() {
    super('too many list queries waiting for a connection');
    this.name = 'ListQueueFullError';
  }
}

/**
 * The pool of list queries: `poolSize` connections whose statements are cancelled after
 * `statementTimeoutMs`, and at most `queueLength` queries waiting for one of them. A list query
 * beyond that is refused at once rather than waiting (and holding its request) for seconds.
 */
function openListPool(databaseUrl: string, budget: ListBudget, log: KyselyConfig['log']): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: budget.poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: budget.statementTimeoutMs,
    application_name: 'cds lists',
  });
  survivePoolErrors(pool);
  const bounded = {
    connect(): Promise<pg.PoolClient> {
      // The pool's own queue holds those waiting; its connections are all busy when it has any.
      if (pool.waitingCount >= budget.queueLength && pool.idleCount === 0 && pool.totalCount >= budget.poolSize) {
        return Promise.reject(new ListQueueFullError());
      }
      return pool.connect();
    },
    end: () => pool.end(),
  };
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool: bounded }), log });
}

/**
 * A connection the server drops (a restart, `pg_ctl stop`, a network cut) emits 'error'; without a
 * listener that event crashes the process. The pool listens only while a client is idle, so every
 * client also gets a listener of its own for the time it is checked out: its query fails (a 503)
 * and the pool discards it on release (`_queryable` is false), so the next request reconnects.
 */
function survivePoolErrors(pool: pg.Pool): void {
  const ignore = () => {};
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
}

/** Where the embedded database lives inside DATA_DIR. */
export function pgliteDir(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}

export class DataDirInUseError extends Error {
  constructor(
    readonly lockFile: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database ${path.dirname(lockFile)} is in use by process ${pid}: stop that process first ` +
        `(or, to run several processes on one database, use a PostgreSQL server through DATABASE_URL). ` +
        `If no such process exists, delete ${lockFile}.`,
    );
    this.name = 'DataDirInUseError';
  }
}

interface DataDirLock {
  release(): Promise<void>;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dir>.lock` beside the PGlite folder, holding this process's id. A lock left by a process
 * that no longer runs (a crash, a kill -9) is taken over; one held by a live process is refused.
 */
async function lockDataDir(dir: string): Promise<DataDirLock> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const file = `${dir}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fs.writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return {
        async release() {
          const holder = await fs.readFile(file, 'utf8').catch(() => '');
          if (Number.parseInt(holder, 10) === process.pid) await fs.rm(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = Number.parseInt(await fs.readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(pid) && pid > 0 && isRunning(pid)) throw new DataDirInUseError(file, pid);
    // Stale: its process is gone. Remove it and try again.
    await fs.rm(file, { force: true });
  }
  throw new Error(`could not take the lock ${file}`);
}
