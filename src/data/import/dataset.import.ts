// Loads the bundled (or a given) dataset into the database. Everything happens in one transaction
// (the GitHub issues are staged in it as they are read), so a bad file changes nothing.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '../../db/index.ts';
import { bumpDataVersion, readDataVersion } from '../../announcements/counters.queries.ts';
import { analyzeAll, noStatementTimeout } from './dataset.queries.ts';
import { recordNoChanges } from '../base/baseline.queries.ts';
import { lockWrites } from '../base/write-lock.queries.ts';
import { readOwaspData } from '../owasp/owasp.read.ts';
import { writeOwaspData } from '../owasp/owasp.write.ts';
import type { OwaspReport } from '../owasp/owasp.types.ts';
import { changedRows } from '../base/resource-counts.ts';
import { readGithubData } from './github/github.read.ts';
import type { GithubReport } from '../github/github.records.ts';
import { writeGithubDataset } from './github/github-dataset.write.ts';
import { phaseTrace } from './import.trace.ts';
import { rebuildSnapshots, snapshotsChanged, type RebuildResult } from '../snapshots/monthly-snapshots.queries.ts';
import { NO_PROGRESS, type SyncProgress } from '../base/sync-log.ts';
import { loadDumps } from './dumps/dumps.load.ts';
import { ROW_DUMPS, firstNonEmptyTable } from './dumps/dump-rows.queries.ts';
import type { DumpSourceOptions } from './dumps/dumps.source.ts';
import { ImportError } from '../base/import-error.ts';
import { updateHealth, type HealthReport } from '../health/health.refresh.ts';

export const BUNDLED_DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../data');

export interface ImportSources {
  /** Folder with the OWASP website's data files (chapters.json, …). */
  owaspDir: string;
  /** Folder with the recorded GitHub responses (one sub-folder per account). */
  githubDir: string;
}

export interface ImportReport {
  owasp: OwaspReport;
  github: GithubReport;
  /** The monthly snapshots, rebuilt in the same transaction. */
  snapshots: RebuildResult;
  /** Every project's health, computed in the same transaction (docs/health.md). */
  health: HealthReport;
  /** False when the database already held exactly this data (snapshots included). */
  changed: boolean;
  dataVersion: number;
  durationMs: number;
  /** `--from-dumps`: the source, the data version of its dumps, and the tombstones and counted releases read. */
  dumps?: { url: string; dataVersion: number; tombstones: number; countedReleases: number };
}

export function sourcesFrom(dir: string = BUNDLED_DATA_DIR): ImportSources {
  return { owaspDir: path.join(dir, 'owasp'), githubDir: path.join(dir, 'github') };
}

export interface ImportOptions {
  /** The clock that decides which months are complete (snapshots); the system's by default. */
  now?: () => Date;
  /** Told of each step of the import as it ends (`cds import` draws a bar on a terminal); nothing by default. */
  progress?: SyncProgress;
  /** Print each phase's seconds and memory to stderr (IMPORT_TRACE, config.ts); off by default. */
  trace?: boolean;
}

/** The steps reported to ImportOptions.progress, in order: one advance() at the end of each. */
export const IMPORT_STEPS = [
  'OWASP files read',
  'GitHub records read',
  'GitHub records written',
  'OWASP records written',
  'snapshots rebuilt',
] as const;

export async function importDataset(
  db: Db,
  sources: ImportSources = sourcesFrom(),
  options: ImportOptions = {},
): Promise<ImportReport> {
  return (await runImport(db, sources, false, options))!;
}

/** Refreshes the planner's statistics after a load (PGlite has no autovacuum to do it). */
export async function analyze(db: Db): Promise<void> {
  await analyzeAll(db);
}

/** Imports only into a database that has never been loaded (first start); null when it had data. */
export async function importIfEmpty(
  db: Db,
  sources: ImportSources = sourcesFrom(),
  options: ImportOptions = {},
): Promise<ImportReport | null> {
  // The usual case, a database loaded before, costs one query instead of reading every file.
  if ((await readDataVersion(db)) > 0) return null;
  const report = await runImport(db, sources, true, options);
  if (report) await analyze(db);
  return report;
}

async function runImport(
  db: Db,
  sources: ImportSources,
  onlyIfEmpty: boolean,
  options: ImportOptions = {},
): Promise<ImportReport | null> {
  const started = performance.now();
  const progress = options.progress ?? NO_PROGRESS;
  const trace = phaseTrace(options.trace ?? false);
  // Each step's result passes through, so the hook cannot change what the import does.
  const step = <T>(result: T, index: number): T => {
    progress.advance(IMPORT_STEPS[index]!);
    return result;
  };
  progress.start(IMPORT_STEPS.length, 'import');
  try {
    const owaspData = step(await readOwaspData(sources.owaspDir), 0);
    return await db.transaction().execute(async (trx) => {
      await lockWrites(trx);
      const empty = (await readDataVersion(trx)) === 0;
      if (onlyIfEmpty && !empty) return null;
      // The first import into an empty database is the baseline: no change recorded (base/baseline.queries.ts).
      if (empty) await recordNoChanges(trx);
      // A bulk load: its set-based statements (a million issues at once) may take longer than a request's budget.
      await noStatementTimeout(trx);
      // The GitHub responses are read inside the transaction: their issues are staged in its TEMP tables
      // (github/github-dataset.stage.ts), so memory does not grow with their number; a bad file still changes nothing.
      const githubData = step(await readGithubData(sources.githubDir, trx, trace), 1);
      // GitHub first: leaders may link to the members it stores.
      const github = step(await writeGithubDataset(trx, githubData, trace), 2);
      const owasp = step(await writeOwaspData(trx, owaspData), 3);
      // Every import, changed or not: a month may have completed since the last one.
      const now = options.now?.() ?? new Date();
      const snapshots = step(await rebuildSnapshots(trx, now), 4);
      const written = changedRows(github) + changedRows(owasp.counts) > 0 || snapshotsChanged(snapshots);
      if (written || onlyIfEmpty) await bumpDataVersion(trx);
      // Also when nothing was written: a day has passed for the "days since" checks, and today's point is due.
      const health = await updateHealth(trx, now);
      const changed = written || health.changed > 0 || health.points > 0;
      const dataVersion = await readDataVersion(trx);
      const durationMs = Math.round(performance.now() - started);
      return { owasp, github, snapshots, health, changed, dataVersion, durationMs };
    });
  } finally {
    progress.stop();
  }
}

/**
 * Fills an empty database from another instance's dumps (`cds import --from-dumps`): one transaction as every import
 * (a failure, a checksum that does not match, a source that cannot be reached, changes nothing), the usual report.
 */
export async function importFromDumps(
  db: Db,
  source: DumpSourceOptions,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const started = performance.now();
  const progress = options.progress ?? NO_PROGRESS;
  progress.start(ROW_DUMPS.length + 2, 'import');
  try {
    return await db.transaction().execute(async (trx) => {
      await lockWrites(trx);
      await noStatementTimeout(trx);
      const found = await firstNonEmptyTable(trx);
      await recordNoChanges(trx);
      if (found)
        throw new ImportError(
          '--from-dumps',
          undefined,
          `the database is not empty (${found} has records): it fills an empty database only (import before the ` +
            "server's first start, or start it with AUTO_IMPORT=false)",
        );
      const loaded = await loadDumps(trx, source, (resource) => progress.advance(`${resource} written`));
      // As every import: a month may have completed since the source last rebuilt them.
      const now = options.now?.() ?? new Date();
      const snapshots = await rebuildSnapshots(trx, now);
      progress.advance('snapshots rebuilt');
      const dataVersion = await bumpDataVersion(trx);
      // The source's health is seeded with the rest, its history and today's point too: not computed again, since
      // the dumps lack inputs of it (pull requests, push and close dates; docs/decisions.md). A later sync on the
      // copy computes it as usual.
      const { owasp, github, tombstones, countedReleases, healthRows } = loaded;
      const health: HealthReport = { projects: healthRows, changed: healthRows, points: 0, durationMs: 0 };
      return {
        owasp,
        github,
        snapshots,
        health,
        changed: true,
        dataVersion,
        durationMs: Math.round(performance.now() - started),
        dumps: { ...loaded.source, tombstones, countedReleases },
      };
    });
  } finally {
    progress.stop();
  }
}
