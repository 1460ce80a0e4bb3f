// cds sync github|owasp: the syncs `serve` runs on a schedule, run once by an operator. With --json (the default
// when stdout is not a terminal) the report goes to stdout as JSON; otherwise a summary and a table. Progress bars on stderr when it is a terminal.
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { announceDataChanged } from '../announcements/announce.ts';
import { SyncStopped, syncGithub, type GithubSyncReport } from '../data/sync/github/github.sync.ts';
import { syncOwasp } from '../data/sync/owasp/owasp.sync.ts';
import { OWASP_DATA_URL } from '../data/sync/owasp/owasp.download.ts';
import { githubSummary, owaspSummary } from '../data/sync/sync.summary.ts';
import type { SyncLog } from '../data/base/sync-log.ts';
import { UsageError } from './usage.ts';
import { err, isTerminal, out, progressOn, withDatabase, type ProgressBar } from './output.ts';
import { countsTable, wantsJson } from './tables.ts';
import type { ResourceCounts } from '../data/base/resource-counts.ts';

const stderrLog: SyncLog = {
  info: (message) => err(`${message}\n`),
  warn: (message) => err(`warning: ${message}\n`),
};

function parse(args: string[], options: ParseArgsConfig['options']): Record<string, unknown> {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export async function runSyncCommand(config: Config, args: string[], progressBar?: ProgressBar): Promise<number> {
  const [target, ...options] = args;
  const json = wantsJson({ json: options.includes('--json'), text: options.includes('--text') }, isTerminal('stdout'));
  if (options.includes('--json') && options.includes('--text'))
    throw new UsageError('--json and --text exclude each other');
  const rest = options.filter((option) => option !== '--json' && option !== '--text');
  const progress = () => progressOn(progressBar);
  const settings = config.sync;
  let failed = false;
  let printed = false;
  // --json (the default when stdout is not a terminal): the JSON report on stdout, the summary line on stderr.
  // Otherwise the summary line and a table of the records on stdout.
  const finish = (report: object, summary: string, changed: boolean, counts?: Record<string, ResourceCounts>) => {
    printed = true;
    if (json) {
      out(`${JSON.stringify(report, null, 2)}\n`);
      err(`${summary}\n`);
    } else {
      out(`${summary}\n`);
      if (counts) out(`\n${countsTable(counts)}`);
    }
    return changed ? announceDataChanged(config) : undefined;
  };
  // Every exit of a run prints a JSON report on stdout: a failure before any report (the database, a file)
  // prints `{ "stopped": message }`, then the message goes to stderr as for any command (exit 1).
  const reportingFailure = async (run: () => Promise<number>): Promise<number> => {
    try {
      return await run();
    } catch (error) {
      if (!printed && json)
        out(`${JSON.stringify({ stopped: error instanceof Error ? error.message : String(error) }, null, 2)}\n`);
      throw error;
    }
  };
  switch (target) {
    case 'github': {
      const values = parse(rest, { org: { type: 'string', multiple: true }, budget: { type: 'string' } });
      const organizations = (values.org as string[] | undefined) ?? [...settings.githubOrgs];
      if (organizations.length === 0) throw new UsageError('sync github needs --org LOGIN (or SYNC_GITHUB_ORGS)');
      const budget = values.budget === undefined ? undefined : Number(values.budget);
      if (budget !== undefined && !(Number.isSafeInteger(budget) && budget > 0))
        throw new UsageError('--budget takes a whole number of requests');
      if (!config.github.token) stderrLog.warn('GITHUB_TOKEN is unset: GitHub allows 60 anonymous requests an hour');
      return reportingFailure(async () => {
        const code = await withDatabase(config, async (db) => {
          await migrateToLatest(db);
          let report: GithubSyncReport;
          try {
            report = await syncGithub(db, {
              apiUrl: config.github.apiUrl,
              token: config.github.token,
              organizations,
              budget,
              log: stderrLog,
              progress: progress(),
              requestsPerMinute: settings.githubRequestsPerMinute,
            });
          } catch (error) {
            if (!(error instanceof SyncStopped)) throw error;
            // Stopped part-way (rate limits, budget, a failure): what was stored stays; the report says how far it got.
            await finish(
              error.report,
              `${githubSummary(error.report)}\n${error.message}`,
              error.report.changed,
              error.report.counts,
            );
            failed = true;
            return;
          }
          failed = report.failed.length > 0;
          await finish(report, githubSummary(report), report.changed, report.counts);
        });
        return failed ? 1 : code;
      });
    }
    case 'owasp': {
      const values = parse(rest, { from: { type: 'string' } });
      const given = (values.from as string | undefined) ?? settings.owaspFrom ?? OWASP_DATA_URL;
      const from = /^https?:\/\//i.test(given) ? given : path.resolve(given);
      return reportingFailure(() =>
        withDatabase(config, async (db) => {
          await migrateToLatest(db);
          const report = await syncOwasp(db, { from, progress: progress() });
          await finish(report, owaspSummary(report), report.changed, report.owasp?.counts);
        }),
      );
    }
    default:
      throw new UsageError(
        target === undefined ? 'sync needs a source: github or owasp' : `unknown sync source "${target}"`,
      );
  }
}
