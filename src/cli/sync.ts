// cds sync github|owasp: the syncs `serve` runs on a schedule, run once by an operator. The report goes to
// stdout as JSON, a progress bar and the one-line summary to stderr.
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { announceDataChanged } from '../plugins/announce.ts';
import { syncGithub } from '../data/sync/github-sync.ts';
import { syncOwasp } from '../data/sync/owasp-sync.ts';
import { terminalProgress } from '../data/sync/progress.ts';
import { OWASP_DATA_URL } from '../data/sync/settings.ts';
import { githubSummary, owaspSummary } from '../data/sync/summary.ts';
import type { SyncLog } from '../data/sync/sync-log.ts';
import { UsageError, withDatabase } from './commands.ts';

const stderrLog: SyncLog = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`warning: ${message}\n`),
};

function parse(args: string[], options: ParseArgsConfig['options']): Record<string, unknown> {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export async function runSyncCommand(config: Config, args: string[]): Promise<number> {
  const [target, ...rest] = args;
  const settings = config.sync;
  let failed = false;
  const finish = (report: object, summary: string, changed: boolean) => {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(`${summary}\n`);
    return changed ? announceDataChanged(config) : undefined;
  };
  switch (target) {
    case 'github': {
      const values = parse(rest, { org: { type: 'string', multiple: true } });
      const organizations = (values.org as string[] | undefined) ?? [...settings.githubOrgs];
      if (organizations.length === 0) throw new UsageError('sync github needs --org LOGIN (or SYNC_GITHUB_ORGS)');
      if (!config.github.token) stderrLog.warn('GITHUB_TOKEN is unset: GitHub allows 60 anonymous requests an hour');
      const code = await withDatabase(config, async (db) => {
        await migrateToLatest(db);
        const report = await syncGithub(db, {
          apiUrl: config.github.apiUrl, token: config.github.token, organizations, log: stderrLog, progress: terminalProgress(),
        });
        failed = report.failed.length > 0;
        await finish(report, githubSummary(report), report.changed);
      });
      return failed ? 1 : code;
    }
    case 'owasp': {
      const values = parse(rest, { from: { type: 'string' } });
      const given = (values.from as string | undefined) ?? settings.owaspFrom ?? OWASP_DATA_URL;
      const from = /^https?:\/\//i.test(given) ? given : path.resolve(given);
      return withDatabase(config, async (db) => {
        await migrateToLatest(db);
        const report = await syncOwasp(db, { from, progress: terminalProgress() });
        await finish(report, owaspSummary(report), report.changed);
      });
    }
    default:
      throw new UsageError(target === undefined ? 'sync needs a source: github or owasp' : `unknown sync source "${target}"`);
  }
}
