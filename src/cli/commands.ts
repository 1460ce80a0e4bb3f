import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { analyze, importDataset, sourcesFrom } from '../data/import.ts';
import { openConfiguredDatabase } from '../startup.ts';
import { announceDataChanged } from '../plugins/announce.ts';
import { countRecords } from './status.queries.ts';
import { refreshSnapshots } from '../data/snapshots/snapshots.rebuild.ts';
import { runKeysCommand } from './keys.ts';
import { runSyncCommand } from './sync.ts';

export const USAGE = `Usage: cds <command> [options]

Commands:
  serve                 start the service (same as npm start)
  migrate               apply pending database migrations
  import [--from DIR]   import a dataset (DIR holds owasp/ and github/; default: the bundled data)
  status                print the number of stored records per resource
  sync github [--org LOGIN]… [--budget N]
                        mirror GitHub organizations (default: SYNC_GITHUB_ORGS): public repositories, issues,
                        labels, milestones, releases, members; incremental and resumable; --budget stops
                        the run before it spends more than N requests of the hourly limit
  sync owasp [--from URL|DIR]
                        load the OWASP website's data files (default: SYNC_OWASP_FROM, else owasp.github.io's)
  snapshots rebuild     rebuild the monthly snapshots from the stored records (import and sync do it too)
  keys create --user LOGIN --name NAME --expires-in DAYS
                        create an API key for a user (prints the raw key once, on stdout)
  keys list --user LOGIN
                        list a user's keys (all of them, with their state)
  keys revoke UUID      revoke a key

The database is DATABASE_URL when set, else the embedded one under DATA_DIR.
`;

export class UsageError extends Error {}

export async function runCommand(config: Config, command: string, args: string[]): Promise<number> {
  const parse = (options: ParseArgsConfig['options'] = {}) => {
    try {
      return parseArgs({ args, options, allowPositionals: false, strict: true });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  };
  switch (command) {
    case 'migrate': {
      parse();
      return withDatabase(config, async (db) => {
        const applied = await migrateToLatest(db);
        process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      });
    }
    case 'import': {
      const { values } = parse({ from: { type: 'string' } });
      const from = values.from === undefined ? undefined : path.resolve(String(values.from));
      return withDatabase(config, async (db) => {
        await migrateToLatest(db);
        const report = await importDataset(db, sourcesFrom(from));
        if (report.changed) {
          await analyze(db);
          await announceDataChanged(config);
        }
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        process.stderr.write(
          `imported in ${report.durationMs} ms; ${report.changed ? `data version ${report.dataVersion}` : 'nothing changed'}\n`,
        );
      });
    }
    case 'status': {
      parse();
      return withDatabase(config, async (db) => {
        const counts = await countRecords(db);
        const width = Math.max(...Object.keys(counts).map((k) => k.length));
        for (const [name, count] of Object.entries(counts)) process.stdout.write(`${name.padEnd(width)}  ${count}\n`);
      });
    }
    case 'snapshots': {
      const { positionals } = parsePositionals(args);
      if (positionals.length !== 1 || positionals[0] !== 'rebuild') throw new UsageError('snapshots needs one action: rebuild');
      return withDatabase(config, async (db) => {
        await migrateToLatest(db);
        const report = await refreshSnapshots(db);
        if (report.changed) await announceDataChanged(config);
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        process.stderr.write(
          `${report.snapshots} snapshots; ${report.changed ? `${report.added} added, ${report.updated} updated, ${report.removed} removed, data version ${report.dataVersion}` : 'nothing changed'}\n`,
        );
      });
    }
    case 'keys':
      return runKeysCommand(config, args);
    case 'sync':
      return runSyncCommand(config, args);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function parsePositionals(args: string[]) {
  try {
    return parseArgs({ args, options: {}, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export async function withDatabase(config: Config, work: (db: import('../db/index.ts').Db) => Promise<void>): Promise<number> {
  const database = await openConfiguredDatabase(config);
  try {
    await work(database.db);
    return 0;
  } finally {
    await database.close();
  }
}
