// What `npm start` and `cds serve` do before listening: open the database, bring its schema up to
// date and, on a database that has never been loaded, import the bundled dataset.
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, pgliteDir, type Database } from './db/index.ts';
import { migrateToLatest } from './db/migrate.ts';
import { importIfEmpty } from './data/import.ts';

export async function openConfiguredDatabase(config: Config): Promise<Database> {
  return openDatabase({ databaseUrl: config.databaseUrl, dataDir: pgliteDir(config.dataDir) });
}

export async function prepareDatabase(database: Database, config: Config, log: Logger): Promise<void> {
  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
  if (!config.autoImport) return;
  const report = await importIfEmpty(database.db);
  if (report) log.info({ durationMs: report.durationMs, dataVersion: report.dataVersion }, 'bundled dataset imported');
}
