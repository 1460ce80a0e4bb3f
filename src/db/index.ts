// Opens the one database the service uses: a PostgreSQL server when DATABASE_URL is set,
// otherwise an embedded PGlite (PostgreSQL compiled to WASM) persisted under DATA_DIR, run in a worker thread
// (pglite-host.ts). Both go through node-postgres, so every query, type parser and migration is shared.
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { Kysely, type KyselyConfig, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type { DB } from './schema.ts';
import type { PgliteWorker } from './pglite-host.ts';
import { PgliteSupervisor, type EmbeddedHealth, type RestartOptions } from './pglite-supervisor.ts';
import { timestampParser } from './timestamps.ts';
import { TransactionLockDialect } from './migration-lock.ts';
import {
  sessionSettings,
  settingsPerTransaction,
  startupParameters,
  transactionAfter,
  type PoolMode,
  type Query,
} from './pool-mode.ts';
import { namingReads } from './prepared.ts';

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
    const db = new Kysely<DB>({
      dialect: new TransactionLockDialect({ pool: closingTimedOut(pool, connection.perTransaction, prepare) }),
      log: options.log,
    });
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
  // copy of this module and of PgliteSupervisor, test/spare-db.ts). PgliteSupervisor is the only EmbeddedHealth.
  return (database.embedded as PgliteSupervisor | undefined)?.current;
}

async function openPglite(options: OpenOptions, dataDir: string, lock: DataDirLock | undefined): Promise<Database> {
  const { loadDataDir } = options;
  const worker = await PgliteSupervisor.open(
    { dataDir, sharedBuffersMb: options.sharedBuffersMb, ...(loadDataDir ? { loadDataDir } : {}) },
    options.restart,
  );
  const pool = embeddedPool(worker);
  const db = new Kysely<DB>({ dialect: new TransactionLockDialect({ pool }), log: options.log });
  const database: Database = {
    db,
    // List queries wait for the one session in the same queue as every other query, but at most `queueLength` of
    // them: one more is refused at once (503 with Retry-After) instead of holding its request behind the others.
    ...(options.lists
      ? {
          lists: new Kysely<DB>({
            dialect: new TransactionLockDialect({ pool: boundedPool(pool, 1, options.lists.queueLength) }),
            log: options.log,
          }),
        }
      : {}),
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
  return new Kysely<DB>({ dialect: new TransactionLockDialect({ pool: embeddedPool(worker) }), log });
}

function embeddedPool(worker: PgliteSupervisor): pg.Pool {
  const pool = new pg.Pool({ max: 1, stream: () => worker.socket() });
  survivePoolErrors(pool);
  return pool;
}

/**
 * `pool` for queries that must not wait behind more than `queueLength` others: with every one of its `size`
 * connections busy and that many queries already in its queue (the pool's own, shared with whoever else uses it), the
 * next one is refused with ListQueueFullError instead of waiting.
 */
function boundedPool(pool: pg.Pool, size: number, queueLength: number) {
  return {
    connect(): Promise<pg.PoolClient> {
      if (pool.waitingCount >= queueLength && pool.idleCount === 0 && pool.totalCount >= size) {
        return Promise.reject(new ListQueueFullError());
      }
      return pool.connect();
    },
    end: () => pool.end(),
  };
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
function openListPool(
  databaseUrl: string,
  budget: ListBudget,
  mode: PoolMode,
  log: KyselyConfig['log'],
  prepare: boolean,
): Db {
  const connection = serverConnection(budget.statementTimeoutMs, mode);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: budget.poolSize,
    idleTimeoutMillis: 30_000,
    ...connection.config,
    // (A start-up parameter PgBouncer accepts and keeps per client.)
    application_name: 'cds lists',
  });
  survivePoolErrors(pool);
  const bounded = boundedPool(pool, budget.poolSize, budget.queueLength);
  return new Kysely<DB>({
    dialect: new TransactionLockDialect({ pool: closingTimedOut(bounded, connection.perTransaction, prepare) }),
    log,
  });
}

/**
 * How much longer than its statement timeout a query of a serving pool waits for the server's answer (node-postgres'
 * query_timeout). A slow statement is cancelled by the server first (57014, the connection stays usable); only when
 * the server cannot answer at all (a network partition that drops packets, no reset) does the client give up, and
 * then closes that connection. Without it such a request would wait until TCP gives up retransmitting (Linux:
 * tcp_retries2), many minutes, holding its connection all along.
 */
export const QUERY_TIMEOUT_MARGIN_MS = 2_000;
/** Opening a connection (and waiting in a pool's queue for one) takes at most this long. */
const CONNECTION_TIMEOUT_MS = 5_000;
/**
 * TCP keepalive on a connection idle this long: the kernel probes the server, and a connection whose probes go
 * unanswered (the system's tcp_keepalive_intvl and tcp_keepalive_probes) fails and leaves the pool by itself.
 */
const KEEPALIVE_IDLE_MS = 10_000;

interface ServerConnection {
  config: pg.PoolConfig;
  /** Transaction mode: the settings each transaction sets (pool-mode.ts); session mode: none, they are start-up's. */
  perTransaction?: Record<string, string>;
}

/** The connection settings of a pool of a PostgreSQL server; `statementTimeoutMs`: the serving pools'. */
function serverConnection(statementTimeoutMs: number | undefined, mode: PoolMode): ServerConnection {
  const queryTimeoutMs = statementTimeoutMs ? statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS : undefined;
  // The statement timeout and the search's pg_trgm thresholds (migration 0011), for every session.
  const settings = sessionSettings(statementTimeoutMs);
  return {
    config: {
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
      // Never longer than waiting for an answer: with short statement timeouts (the tests'), a request that needs a
      // new connection during a partition gives up as soon as one that had a connection.
      connectionTimeoutMillis: Math.min(CONNECTION_TIMEOUT_MS, queryTimeoutMs ?? CONNECTION_TIMEOUT_MS),
      ...(queryTimeoutMs ? { query_timeout: queryTimeoutMs } : {}),
      ...(mode === 'session' ? startupParameters(settings) : {}),
    },
    ...(mode === 'transaction' ? { perTransaction: settings } : {}),
  };
}

/** node-postgres' error when a query got no answer within query_timeout. */
const QUERY_READ_TIMEOUT = 'Query read timeout';

/**
 * The pool as Kysely's PostgresDialect sees it, except that a client whose query got no answer within query_timeout
 * is closed on release instead of going back to the pool. node-postgres (8.x) rejects such a query but keeps it as
 * the client's active query, and the client still counts as usable: returned to the pool (Kysely releases with a
 * bare `release()`), the next query given to it would wait behind an answer that may never come. Released with the
 * error, the pool ends it (its socket destroyed, since a query is still active). Until then its further queries (a
 * transaction's rollback) fail at once.
 */
function closingTimedOut(
  pool: { connect(): Promise<pg.PoolClient>; end(): Promise<void> },
  perTransaction?: Record<string, string>,
  prepare = false,
): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrapped.get(client);
      if (!wrapper) {
        wrapper = releasingTimedOut(client, perTransaction, prepare);
        wrapped.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/** A client inside a transaction when released (never by Kysely): closed, its server session is not reusable. */
const RELEASED_IN_TRANSACTION = new Error('connection released inside a transaction');

function releasingTimedOut(
  client: pg.PoolClient,
  perTransaction?: Record<string, string>,
  prepare = false,
): PostgresPoolClient {
  let timedOut: Error | undefined;
  // Session mode only (prepared.ts): whether Kysely's begin has no commit or rollback yet.
  let inTransaction = false;
  const send: Query = prepare
    ? namingReads(client, () => inTransaction)
    : (sql, parameters) => client.query(sql, parameters as unknown[]);
  const query = async (sql: string, parameters: readonly unknown[]) => {
    if (timedOut) throw new Error('Client has encountered a connection error and is not queryable (query timeout)');
    if (prepare) inTransaction = transactionAfter(sql, inTransaction);
    try {
      return await send(sql, parameters);
    } catch (error) {
      if (error instanceof Error && error.message === QUERY_READ_TIMEOUT) timedOut = error;
      throw error;
    }
  };
  const pooled = perTransaction ? settingsPerTransaction(query, perTransaction) : undefined;
  // Kysely's dialect is given no cursor, so the cursor form of `query` is never called.
  return {
    query: pooled ? pooled.query : query,
    release: () => client.release(timedOut ?? (pooled?.inTransaction ? RELEASED_IN_TRANSACTION : undefined)),
  } as unknown as PostgresPoolClient;
}

/**
 * `select 1` on a connection of `pool`, given up after `timeoutMs` without keeping a connection: one still being
 * opened (or waited for) when the time is up is released as soon as it comes, and one whose answer did not come in
 * time is closed (its own query_timeout) rather than returned to the pool. A readiness probe that gives up after 2 s
 * while its query keeps the connection would, during a partition, take one more connection at every probe.
 */
async function pingWithin(pool: pg.Pool, timeoutMs: number): Promise<void> {
  const started = performance.now();
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  let client: pg.PoolClient;
  try {
    client = await Promise.race([
      connecting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout exceeded when trying to connect')), timeoutMs);
      }),
    ]);
  } catch (error) {
    connecting.then(
      (late) => late.release(),
      () => {},
    );
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const left = Math.max(1, Math.round(timeoutMs - (performance.now() - started)));
  try {
    await client.query({ text: 'select 1', query_timeout: left } as pg.QueryConfig);
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw error;
  }
  client.release();
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
