// What `npm start` and `cds serve` do before listening: open the database, bring its schema up to
// date and, on a database that has never been loaded, import the bundled dataset.
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, pgliteDir, type Database, type ListBudget } from './db/index.ts';
import { migrateToLatest } from './db/migrate.ts';
import { withReplicas } from './db/server/replicas.ts';
import { importIfEmpty } from './data/import/dataset.import.ts';
import { refreshHealth } from './data/health/health.refresh.ts';
import { ensureDatabaseExists } from './startup.queries.ts';

/**
 * `statementTimeoutMs`: the serving pool's statement timeout (DATABASE_STATEMENT_TIMEOUT_MS; unset: none, as `cds`
 * commands want). `lists`: the serving database's budget of list queries (a pool of their own on a PostgreSQL server).
 */
export async function openConfiguredDatabase(
  config: Config,
  statementTimeoutMs?: number,
  lists?: ListBudget,
): Promise<Database> {
  // A database named in DATABASE_URL but missing on the server is created (or the error says what to run).
  if (config.databaseUrl)
    await ensureDatabaseExists(config.databaseUrl, { pooled: config.databasePoolMode === 'transaction' });
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: pgliteDir(config.dataDir),
    sharedBuffersMb: config.pgliteSharedBuffersMb,
    statementTimeoutMs,
    poolMode: config.databasePoolMode,
    preparedStatements: config.databasePreparedStatements,
    lists,
  });
  // Read replicas serve the REST reads, so only the serving database (the one given a list budget, server.ts) has them;
  // each opened like the primary, with the same pools, timeouts and pool mode.
  if (!lists || config.databaseReplicaUrls.length === 0) return database;
  const open = (databaseUrl: string) =>
    openDatabase({
      databaseUrl,
      statementTimeoutMs,
      poolMode: config.databasePoolMode,
      preparedStatements: config.databasePreparedStatements,
      lists,
    });
  return withReplicas(database, config.databaseReplicaUrls, open, { maxLagMs: config.replicaMaxLagMs });
}

export async function prepareDatabase(database: Database, config: Config, log: Logger): Promise<void> {
  // Migrations and the first import may take long on a big database: on a server they get a pool
  // of their own without the serving pool's statement timeout.
  const setup = config.databaseUrl
    ? await openDatabase({ databaseUrl: config.databaseUrl, poolSize: 2, poolMode: config.databasePoolMode })
    : database;
  try {
    const applied = await migrateToLatest(setup.db);
    if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
    // A database loaded before health existed: its first computation now rather than at the next import or sync.
    if (applied.includes('0016_project_health')) await refreshHealth(setup.db);
    if (!config.autoImport) return;
    const report = await importIfEmpty(setup.db, undefined, { trace: config.importTrace });
    if (report)
      log.info({ durationMs: report.durationMs, dataVersion: report.dataVersion }, 'bundled dataset imported');
  } finally {
    if (setup !== database) await setup.close();
  }
}
