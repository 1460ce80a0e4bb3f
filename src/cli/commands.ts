import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { analyze, importDataset, sourcesFrom } from '../data/import.ts';
import { openConfiguredDatabase } from '../startup.ts';
import { announceDataChanged } from '../changes/announce.ts';
import { countRecords } from './status.queries.ts';
import { refreshSnapshots } from '../data/snapshots/snapshots.rebuild.ts';
import { runKeysCommand } from './keys.ts';
import { runSyncCommand } from './sync.ts';
import { terminalProgress } from '../data/sync/progress.ts';
import { NO_PROGRESS } from '../data/sync/sync-log.ts';
import { runUsersCommand } from './users.ts';
import { err, isTerminal, out, sharedDatabase } from './output.ts';
import { countsTable, wantsJson } from './tables.ts';

export const USAGE = `Usage: cds <command> [options]

Commands:
  serve                 start the service (same as npm start)
  migrate               apply pending database migrations
  import [--from DIR] [--json|--text]
                        import a dataset (DIR holds owasp/ and github/; default: the bundled data); prints a
                        table of the records read and changed on a terminal, the JSON report otherwise or with --json;
                        a progress bar on stderr when it is a terminal
  status                print the number of stored records per resource
  sync github [--org LOGIN]… [--budget N]
                        mirror GitHub organizations (default: SYNC_GITHUB_ORGS): public repositories, issues,
                        labels, milestones, releases, members; incremental and resumable; --budget stops
                        the run before it spends more than N requests of the hourly limit
  sync owasp [--from URL|DIR]
                        load the OWASP website's data files (default: SYNC_OWASP_FROM, else owasp.github.io's)
  sync … --json|--text  the JSON report (default when stdout is not a terminal) or a summary and a table (default
                        on a terminal, with progress bars on stderr)
  snapshots rebuild     rebuild the monthly snapshots from the stored records (import and sync do it too)
  keys create --user LOGIN --name NAME --expires-in DAYS
                        create an API key for a user (prints the raw key once, on stdout)
  keys list --user LOGIN
                        list a user's keys (all of them, with their state)
  keys revoke UUID      revoke a key
  users create LOGIN [--key NAME] [--expires-in DAYS]
                        create a local user (no GitHub account needed); with --key, also an API key
                        for it (default 30 days), printed once on stdout

Options of every command:
  --help, -h            this help, or a command's own (cds sync --help)
  --wait-for-server     (first, before the command) wait until a server on DATA_DIR is ready and run the
                        command there

The database is DATABASE_URL when set, else the embedded one under DATA_DIR. While a server runs on the
embedded database, commands are sent to it over its admin socket (DATA_DIR/cds.sock) and run inside it.
`;

/** The usage lines of one command (`cds keys --help`); undefined for an unknown command. */
export function helpFor(command: string): string | undefined {
  const lines = USAGE.split('\n');
  const start = lines.findIndex((line) => line === 'Commands:');
  const end = lines.findIndex((line, index) => index > start && line === '');
  const own: string[] = [];
  let inside = false;
  for (const line of lines.slice(start + 1, end)) {
    if (/^ {2}\S/.test(line)) inside = line.trim().split(/\s+/)[0] === command;
    if (inside) own.push(line);
  }
  if (own.length === 0) return undefined;
  return `Usage: cds ${command} …\n\n${own.join('\n')}\n\nAll commands: cds --help\n`;
}

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
        err(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      });
    }
    case 'import': {
      const { values } = parse({ from: { type: 'string' }, json: { type: 'boolean' }, text: { type: 'boolean' } });
      if (values.json && values.text) throw new UsageError('--json and --text exclude each other');
      const json = wantsJson(values, isTerminal('stdout'));
      const from = values.from === undefined ? undefined : path.resolve(String(values.from));
      return withDatabase(config, async (db) => {
        await migrateToLatest(db);
        const report = await importDataset(db, sourcesFrom(from), {
          progress: isTerminal('stderr') ? terminalProgress() : NO_PROGRESS,
        });
        if (report.changed) {
          await analyze(db);
          await announceDataChanged(config);
        }
        if (json) out(`${JSON.stringify(report, null, 2)}\n`);
        else {
          out(
            `OWASP website data\n${countsTable(report.owasp.counts)}\nGitHub records\n${countsTable(report.github)}\n`,
          );
          out(
            `snapshots: ${report.snapshots.snapshots} (${report.snapshots.added} added, ${report.snapshots.updated} updated, ${report.snapshots.removed} removed)\n`,
          );
        }
        err(
          `imported in ${report.durationMs} ms; ${report.changed ? `data version ${report.dataVersion}` : 'nothing changed'}\n`,
        );
      });
    }
    case 'status': {
      parse();
      return withDatabase(config, async (db) => {
        const counts = await countRecords(db);
        const width = Math.max(...Object.keys(counts).map((k) => k.length));
        for (const [name, count] of Object.entries(counts)) out(`${name.padEnd(width)}  ${count}\n`);
      });
    }
    case 'snapshots': {
      const { positionals } = parsePositionals(args);
      if (positionals.length !== 1 || positionals[0] !== 'rebuild')
        throw new UsageError('snapshots needs one action: rebuild');
      return withDatabase(config, async (db) => {
        await migrateToLatest(db);
        const report = await refreshSnapshots(db);
        if (report.changed) await announceDataChanged(config);
        out(`${JSON.stringify(report, null, 2)}\n`);
        err(
          `${report.snapshots} snapshots; ${report.changed ? `${report.added} added, ${report.updated} updated, ${report.removed} removed, data version ${report.dataVersion}` : 'nothing changed'}\n`,
        );
      });
    }
    case 'keys':
      return runKeysCommand(config, args);
    case 'sync':
      return runSyncCommand(config, args);
    case 'users':
      return runUsersCommand(config, args);
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

export async function withDatabase(
  config: Config,
  work: (db: import('../db/index.ts').Db) => Promise<void>,
): Promise<number> {
  const shared = sharedDatabase();
  if (shared) {
    // Inside the server (admin channel): its database, already migrated, stays open.
    await work(shared.db);
    return 0;
  }
  const database = await openConfiguredDatabase(config);
  try {
    await work(database.db);
    return 0;
  } finally {
    await database.close();
  }
}
