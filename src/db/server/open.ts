// A PostgreSQL server (DATABASE_URL): the serving pool and, with a budget, the pool of list queries, in the pool mode
// the server is reached through (pool-mode.ts: `session`, or `transaction` behind a pooler) and with named reads where
// that mode allows them (prepared.ts).
import pg from 'pg';
import { kyselyOver } from '../migration-lock.ts';
import type { Database, OpenOptions } from '../database.ts';
import { survivePoolErrors } from '../pools.ts';
import { closingTimedOut, openListPool, pingWithin, serverConnection } from './server-pools.ts';

export function openServerDatabase(databaseUrl: string, options: OpenOptions): Database {
  const mode = options.poolMode ?? 'session';
  // Named reads (prepared.ts), never through a pooler in transaction mode.
  const prepare = (options.preparedStatements ?? false) && mode === 'session';
  // No request may hold a connection for long; a cancelled statement becomes a 503.
  const connection = serverConnection(options.statementTimeoutMs, mode);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
    ...connection.config,
  });
  survivePoolErrors(pool);
  const db = kyselyOver(closingTimedOut(pool, connection.perTransaction, prepare), options.log);
  const ping = (timeoutMs: number) => pingWithin(pool, timeoutMs);
  if (!options.lists) return { db, kind: 'postgres', ping, close: () => db.destroy() };
  const lists = openListPool(databaseUrl, options.lists, mode, options.log, prepare);
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
