// How a pool of a PostgreSQL server gives each session what it needs (DATABASE_POOL_MODE, issue 29).
// `session`: a connection is one server session, so its settings are start-up parameters, sent once.
// `transaction`: a pooler in transaction mode (PgBouncer's `pool_mode = transaction`) hands each transaction to
// whichever server connection is free, so nothing may outlive a transaction: PgBouncer refuses the start-up
// parameters (`unsupported startup parameter: statement_timeout`), and a session SET would leak to the next client of
// that server connection. Every statement then runs in a transaction that begins with SET LOCAL of the settings.
// The rest of the service holds no session state either: its locks are transaction locks or leases (migrate.ts,
// data/scheduler/sync.scheduler.ts), it never LISTENs, and in this mode it names no prepared statement (prepared.ts is off), so
// PgBouncer 1.18's lack of prepared statements in transaction mode does not matter.
import type pg from 'pg';
import type { PoolMode } from '../../config.ts';
import { TRIGRAM_SETTINGS } from '../migrations/0011_fulltext_search.ts';

export type { PoolMode };

/** A query function of one client, as Kysely's dialect calls it (text, parameters). */
export type Query = (text: string, parameters: readonly unknown[]) => Promise<unknown>;

/**
 * PostgreSQL's JIT compilation, off for the service's sessions. It starts when a plan's estimated cost passes
 * `jit_above_cost` (100,000 by default), and the estimates of the statements that build JSON in SQL (a subplan per
 * row and per nested field) pass it at a few hundred rows: the projects' dump, 273 rows that run in ~0.18 s, spent
 * 3.3 s compiling (193 functions; EXPLAIN ANALYZE on the bundled data, PostgreSQL 15, docs/decisions.md). A request's
 * statement is short and seldom the same twice per process, so the compile is never paid back.
 */
export const JIT_SETTINGS: Readonly<Record<string, string>> = { jit: 'off' };

/**
 * The settings every session of a pool needs: its statement timeout (serving pools), pg_trgm's thresholds (search),
 * no JIT.
 */
export function sessionSettings(statementTimeoutMs: number | undefined): Record<string, string> {
  return {
    ...(statementTimeoutMs ? { statement_timeout: String(statementTimeoutMs) } : {}),
    ...TRIGRAM_SETTINGS,
    ...JIT_SETTINGS,
  };
}

/** In session mode, the settings as start-up parameters of each connection. */
export function startupParameters(settings: Record<string, string>): pg.PoolConfig {
  const { statement_timeout: statementTimeout, ...rest } = settings;
  const options = Object.entries(rest).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  return {
    ...(statementTimeout ? { statement_timeout: Number(statementTimeout) } : {}),
    ...(options.length > 0 ? { options: options.join(' ') } : {}),
  };
}

const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** Kysely's `begin` and `start transaction …`; the end of one is `commit` or `rollback` (not `rollback to …`). */
const BEGINS = /^\s*(begin|start\s+transaction)\b/i;
const ENDS = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i;
/** Longer than any `begin`, `start transaction isolation level … read only` or end of one. */
const SHORT = 120;

/** Whether a session is in a transaction after `text`, given whether it was before (Kysely's begin, commit, rollback). */
export function transactionAfter(text: string, before: boolean): boolean {
  // Kysely's statements that begin or end one are short; a list's statement is not read through (it is run per query).
  if (text.length > SHORT) return before;
  if (BEGINS.test(text)) return true;
  if (ENDS.test(text)) return false;
  return before;
}

export interface PerTransaction {
  query: Query;
  /** True between a `begin` and its end: a client released then must not be reused (its transaction is open). */
  readonly inTransaction: boolean;
}

/**
 * `query` of a client behind a pooler in transaction mode: a transaction's `begin` is sent together with SET LOCAL of
 * `settings` (one round trip: a simple query of several statements), and a statement outside a transaction runs in
 * one of its own, `BEGIN; SET LOCAL …`, the statement, `COMMIT`: two round trips more, the price of a statement
 * timeout that PgBouncer cannot carry from the start-up. A statement that fails is rolled back and its error
 * (a cancelled statement's 57014, hence a 503) passed on unchanged.
 */
export function settingsPerTransaction(query: Query, settings: Record<string, string>): PerTransaction {
  const setLocal = Object.entries(settings)
    .map(([name, value]) => `SET LOCAL ${name} = ${literal(value)}`)
    .join('; ');
  let open = false;
  const first = (results: unknown) => (Array.isArray(results) ? results[0] : results);
  return {
    get inTransaction() {
      return open;
    },
    async query(text, parameters) {
      if (open) {
        if (ENDS.test(text)) open = false;
        return query(text, parameters);
      }
      if (BEGINS.test(text) && parameters.length === 0) {
        const results = await query(setLocal ? `${text}; ${setLocal}` : text, []);
        open = true;
        return first(results);
      }
      if (!setLocal) return query(text, parameters);
      await query(`BEGIN; ${setLocal}`, []);
      try {
        const result = await query(text, parameters);
        await query('COMMIT', []);
        return result;
      } catch (error) {
        // (A COMMIT that failed has ended the transaction already; the ROLLBACK then only warns.)
        await query('ROLLBACK', []).catch(() => {});
        throw error;
      }
    },
  };
}

/**
 * An error of the database at start, with what to set when a pooler refused the start-up parameters of session mode
 * (PgBouncer: `unsupported startup parameter: options`): the message alone does not say that the service has a mode
 * for exactly this pooler (issue 45).
 */
export function withPoolerHint(message: string): string {
  if (!/unsupported startup parameter/i.test(message)) return message;
  return (
    `${message}: a connection pooler (PgBouncer) refuses the settings this service sends when a connection starts; ` +
    'behind a pooler set DATABASE_POOL_MODE=transaction (each transaction then sets them itself; docs/operating.md)'
  );
}
