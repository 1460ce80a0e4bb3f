// The dispatcher of `cds <command>`: parses a command's options and runs it (keys, sync and users in their own
// modules); usage.ts holds the help text, output.ts where a command writes and which database it uses.
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import {
  analyze,
  importDataset,
  importFromDumps,
  sourcesFrom,
  type ImportReport,
} from '../data/import/dataset.import.ts';
import { announceDataChanged } from '../announcements/announce.ts';
import { countRecords, type ResourceCount } from './cds-status.queries.ts';
import { refreshSnapshots } from '../data/snapshots/snapshots.rebuild.ts';
import { runKeysCommand } from './keys.ts';
import { runSyncCommand } from './sync.ts';
import { runUsersCommand } from './users.ts';
import { runWebhooksCommand } from './webhooks.ts';
import { runDumpsCommand } from './dumps.ts';
import { err, isTerminal, out, progressOn, withDatabase, type ProgressBar } from './output.ts';
import { UsageError } from './usage.ts';
import { countsTable, wantsJson } from './tables.ts';

export async function runCommand(
  config: Config,
  command: string,
  args: string[],
  progressBar?: ProgressBar,
): Promise<number> {
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
      const { values } = parse({
        from: { type: 'string' },
        'from-dumps': { type: 'string' },
        json: { type: 'boolean' },
        text: { type: 'boolean' },
      });
      if (values.json && values.text) throw new UsageError('--json and --text exclude each other');
      if (values.from !== undefined && values['from-dumps'] !== undefined)
        throw new UsageError('--from and --from-dumps exclude each other');
      const json = wantsJson(values, isTerminal('stdout'));
      const from = values.from === undefined ? undefined : path.resolve(String(values.from));
      const dumps = values['from-dumps'] === undefined ? undefined : sourceUrl(String(values['from-dumps']));
      return withDatabase(config, async (db) => {
        await migrateToLatest(db);
        const progress = progressOn(progressBar);
        const report = dumps
          ? await importFromDumps(
              db,
              { baseUrl: dumps, apiKey: config.sourceApiKey, pace: config.sourcePace },
              { progress },
            )
          : await importDataset(db, sourcesFrom(from), { progress, trace: config.importTrace });
        if (report.changed) {
          await analyze(db);
          await announceDataChanged(config);
        }
        if (json) out(`${JSON.stringify(report, null, 2)}\n`);
        else printImport(report);
        err(
          `imported in ${report.durationMs} ms; ${report.changed ? `data version ${report.dataVersion}` : 'nothing changed'}\n`,
        );
      });
    }
    case 'dumps':
      return runDumpsCommand(config, args);
    case 'status': {
      const { values } = parse({ json: { type: 'boolean' } });
      return withDatabase(config, async (db) => {
        const counts = await countRecords(db);
        if (values.json) return void out(`${JSON.stringify(counts, null, 2)}\n`);
        out(statusTable(counts));
        err(
          'published: what GET /api/v0/<resource>/ counts. Stored records it leaves out: inactive chapters, committees ' +
            'and projects, chapters without coordinates, members and organizations known only by login (not yet ' +
            'fetched from GitHub); leaders are published inside chapters and projects.\n',
        );
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
      return runSyncCommand(config, args, progressBar);
    case 'users':
      return runUsersCommand(config, args);
    case 'webhooks':
      return runWebhooksCommand(config, args);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** `cds status`: one line per resource, stored and published side by side (`-`: no list of its own). */
function statusTable(counts: ResourceCount[]): string {
  const rows = [
    ['resource', 'stored', 'published'],
    ...counts.map((c) => [c.resource, String(c.stored), String(c.published ?? '-')]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map(([name, stored, published]) =>
      `${name!.padEnd(widths[0]!)}  ${stored!.padStart(widths[1]!)}  ${published!.padStart(widths[2]!)}`.trimEnd(),
    )
    .join('\n')
    .concat('\n');
}

/** The report of `cds import` as tables. */
function printImport(report: ImportReport): void {
  out(`OWASP website data\n${countsTable(report.owasp.counts)}\nGitHub records\n${countsTable(report.github)}\n`);
  out(
    `snapshots: ${report.snapshots.snapshots} (${report.snapshots.added} added, ${report.snapshots.updated} updated, ${report.snapshots.removed} removed)\n`,
  );
  const { health } = report;
  out(`health: ${health.projects} projects (${health.changed} changed, ${health.points} history points written)\n`);
  if (report.dumps)
    out(
      `from the dumps of ${report.dumps.url} (data version ${report.dumps.dataVersion}): ${report.dumps.tombstones} ` +
        `records that left their lists, ${report.dumps.countedReleases} releases counted in snapshots\n`,
    );
}

/** The source of --from-dumps: an http(s) address. */
function sourceUrl(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol))
    throw new UsageError(`--from-dumps needs the http(s) address of the source instance, got "${text}"`);
  return url.toString();
}

function parsePositionals(args: string[]) {
  try {
    return parseArgs({ args, options: {}, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
