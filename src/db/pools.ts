// What the pools of both engines share: the budget of list queries and its bounded queue (a list query beyond it is
// refused at once), and pool errors that must not end the process.
import pg from 'pg';

/** The budget of list queries on a PostgreSQL server (LIST_POOL_SIZE, LIST_STATEMENT_TIMEOUT_MS, LIST_QUEUE_LENGTH). */
export interface ListBudget {
  /** Connections, hence list queries running at once. */
  poolSize: number;
  /** A list statement running longer is cancelled: 503, and its connection is free again. */
  statementTimeoutMs: number;
  /** List queries waiting for a connection; one more is refused at once (503 with Retry-After). */
  queueLength: number;
}

/**
 * `pool` for queries that must not wait behind more than `queueLength` others: with every one of its `size`
 * connections busy and that many queries already in its queue (the pool's own, shared with whoever else uses it), the
 * next one is refused with ListQueueFullError instead of waiting.
 */
export function boundedPool(pool: pg.Pool, size: number, queueLength: number) {
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
 * A connection the server drops (a restart, `pg_ctl stop`, a network cut) emits 'error'; without a
 * listener that event crashes the process. The pool listens only while a client is idle, so every
 * client also gets a listener of its own for the time it is checked out: its query fails (a 503)
 * and the pool discards it on release (`_queryable` is false), so the next request reconnects.
 */
export function survivePoolErrors(pool: pg.Pool): void {
  const ignore = () => {};
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
}
