// The pools of a PostgreSQL server: their connection settings and timeouts, the list pool, the release of a client
// whose query timed out, and the readiness ping. What the embedded database's pool shares with them is ../pools.ts.
import pg from 'pg';
import type { Kysely, KyselyConfig, PostgresPool, PostgresPoolClient } from 'kysely';
import type { DB } from '../schema.ts';
import { kyselyOver } from '../migration-lock.ts';
import {
  sessionSettings,
  settingsPerTransaction,
  startupParameters,
  transactionAfter,
  type PoolMode,
  type Query,
} from './pool-mode.ts';
import { namingReads } from './prepared.ts';
import { boundedPool, survivePoolErrors, type ListBudget } from '../pools.ts';

type Db = Kysely<DB>;

/**
 * The pool of list queries: `poolSize` connections whose statements are cancelled after
 * `statementTimeoutMs`, and at most `queueLength` queries waiting for one of them. A list query
 * beyond that is refused at once rather than waiting (and holding its request) for seconds.
 */
export function openListPool(
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
  return kyselyOver(closingTimedOut(bounded, connection.perTransaction, prepare), log);
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
export function serverConnection(statementTimeoutMs: number | undefined, mode: PoolMode): ServerConnection {
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
export function closingTimedOut(
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
export async function pingWithin(pool: pg.Pool, timeoutMs: number): Promise<void> {
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
