// Where each REST read runs when there are read replicas (replicas.ts): a Kysely whose connections are chosen one by
// one, on a replica current enough or on the primary, with the read run again on the primary when its replica fails.
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  type DatabaseConnection,
  type PostgresPool,
  type PostgresPoolClient,
} from 'kysely';
import type { Db } from '../database.ts';
import type { DB } from '../schema.ts';

/** The choice of a replica for each read, and what it is told when one fails (replicas.ts, Replicas). */
export interface Router<R> {
  /** A replica current enough for the next read, or undefined: the primary. */
  choose(): R | undefined;
  /** The replica failed (not the query): no reads on it for a while. */
  failed(replica: R, error: unknown): void;
  /** A read chosen for the replica ran on the primary instead. */
  fellBack(replica: R): void;
}

/** Its error is the query's own (it would fail the same on the primary): a bad value, bad SQL, its statement timeout. */
function queryError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (/^(22|42)/.test(code) || code === '57014');
}

/** The replica failed, not only this query: unreachable, shutting down, out of resources. A busy list pool is not. */
function replicaFault(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (code === 'LIST_QUEUE_FULL') return false;
  // A SQLSTATE's class is two digits, or F0, HV, P0, XX; anything else (ECONNREFUSED, EPIPE, none) is the connection's.
  const sqlState = typeof code === 'string' && /^([0-5][0-9A-Z]|F0|HV|P0|XX)[0-9A-Z]{3}$/.test(code);
  return !sqlState || /^(08|53|57P|58|XX)/.test(code as string);
}

interface Lease {
  connection: DatabaseConnection;
  release(): void;
}

/** A connection of `db`, held until released (Kysely lends one only for the time of a callback). */
function lease(db: Db): Promise<Lease> {
  return new Promise((resolve, reject) => {
    db.getExecutor()
      .provideConnection(
        (connection) => new Promise<void>((release) => resolve({ connection, release: () => release() })),
      )
      .catch(reject);
  });
}

const BEGINS = /^\s*(begin|start\s+transaction)\b/i;
const ENDS = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i;

/**
 * A Kysely whose every connection is chosen when taken: a current replica's (through `pick`) or the primary's. A query
 * that fails on the replica for the replica's sake runs again on the primary (outside a transaction: inside one it
 * cannot move). Reads only: what comes back is rows.
 */
export function routed<R>(replicas: Router<R>, primary: Db, pick: (replica: R) => Db): Db {
  const pool: PostgresPool = {
    async connect() {
      let replica = replicas.choose();
      let held: Lease | undefined;
      if (replica) {
        held = await lease(pick(replica)).catch((error: unknown) => {
          // (A full queue of its list pool is not a failure of the replica: this read alone goes to the primary.)
          if (replicaFault(error)) replicas.failed(replica!, error);
          replicas.fellBack(replica!);
          return undefined;
        });
        if (!held) replica = undefined;
      }
      let current = held ?? (await lease(primary));
      let inTransaction = false;
      const run = async (text: string, parameters: readonly unknown[]) => {
        const result = await current.connection.executeQuery(CompiledQuery.raw(text, [...parameters]));
        return { command: 'SELECT', rowCount: result.rows.length, rows: result.rows };
      };
      return {
        async query(text: string, parameters: readonly unknown[]) {
          try {
            const result = await run(text, parameters);
            if (BEGINS.test(text)) inTransaction = true;
            else if (ENDS.test(text)) inTransaction = false;
            return result;
          } catch (error) {
            if (!replica || inTransaction || queryError(error)) throw error;
            if (replicaFault(error)) replicas.failed(replica, error);
            replicas.fellBack(replica);
            replica = undefined;
            current.release();
            current = await lease(primary);
            return run(text, parameters);
          }
        },
        release: () => current.release(),
      } as unknown as PostgresPoolClient;
    },
    async end() {},
  };
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
