// What an open database is, and how one is opened, whichever the engine (index.ts opens it: server/ or embedded/).
import type { Kysely, KyselyConfig } from 'kysely';
import type { DB } from './schema.ts';
import type { PoolMode } from '../config.ts';
import type { EmbeddedHealth, RestartOptions } from './embedded-health.ts';
import type { ListBudget } from './pools.ts';

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
