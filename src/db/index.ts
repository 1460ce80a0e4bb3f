// Opens the one database the service uses: a PostgreSQL server when DATABASE_URL is set (server/: its pools, pool
// mode, named reads and replicas), otherwise an embedded PGlite (PostgreSQL compiled to WASM) persisted under
// DATA_DIR, run in a worker thread (embedded/). Both go through node-postgres, so every query, type parser and
// migration is shared.
import pg from 'pg';
import { timestampParser } from './timestamps.ts';
import type { Database, OpenOptions } from './database.ts';
import { openServerDatabase } from './server/open.ts';
import { openEmbeddedDatabase } from './embedded/open.ts';

// Where a data folder keeps its database: read by whoever opens one (startup, the tests, the benches).
export { pgliteDir } from './embedded/data-dir.ts';
export { embeddedDb, embeddedWorker } from './embedded/open.ts';
export { ListQueueFullError, type ListBudget } from './pools.ts';
export type { Database, Db, DbKind, OpenOptions } from './database.ts';
export { QUERY_TIMEOUT_MARGIN_MS } from './server/server-pools.ts';

// `date` columns stay `YYYY-MM-DD` strings: turning them into Date objects would shift them by
// the process's time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

// timestamptz: read by position instead of through the driver's generic parser (see timestamps.ts).
/** The driver's own timestamptz parser, kept as the fallback (and as the reference of the tests). */
export const driverTimestampParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, timestampParser(driverTimestampParser));

export async function openDatabase(options: OpenOptions): Promise<Database> {
  return options.databaseUrl ? openServerDatabase(options.databaseUrl, options) : openEmbeddedDatabase(options);
}
