// `cds sync owasp`: the OWASP website's data files, from a base URL or a folder, through the same reader
// and writer as the bundled data. Records gone from the files become inactive; nothing is deleted.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../../db/index.ts';
import { ImportError } from '../../base/import-error.ts';
import { bumpDataVersion, readDataVersion } from '../../../announcements/counters.queries.ts';
import { changedRows } from '../../base/resource-counts.ts';
import { readOwaspData } from '../../owasp/owasp.read.ts';
import { writeOwaspData } from '../../owasp/owasp.write.ts';
import { loadGazetteer } from '../../geocode/geocode.gazetteer.ts';
import type { OwaspData, OwaspReport } from '../../owasp/owasp.types.ts';
import { downloadFile, OWASP_FILES, type Download, type DownloadLimits } from './owasp.download.ts';
import { NO_PROGRESS, type SyncProgress } from '../../base/sync-log.ts';
import { rebuildSnapshots, snapshotsChanged } from '../../snapshots/monthly-snapshots.queries.ts';
import { updateHealth } from '../../health/health.refresh.ts';
import { lockWrites } from '../../base/write-lock.queries.ts';
import { readRequestStates, replaceRequestStates, type RequestState } from '../../base/sync-state.queries.ts';

export interface OwaspSyncOptions extends Partial<DownloadLimits> {
  /** Base URL of the data files (…/_data/) or a folder holding them. */
  from: string;
  progress?: SyncProgress;
  /** The clock that decides which months are complete (snapshots); the system's by default. */
  now?: () => Date;
}

export interface OwaspSyncReport {
  source: string;
  /** Per file: downloaded, not modified (304), absent (404), or read from the folder. */
  files: Record<string, 'downloaded' | 'not modified' | 'absent' | 'read'>;
  /** Null when every file answered 304: nothing was read or written. */
  owasp: OwaspReport | null;
  changed: boolean;
  dataVersion: number;
  durationMs: number;
}

const SCOPE = 'owasp';

export async function syncOwasp(db: Db, options: OwaspSyncOptions): Promise<OwaspSyncReport> {
  const started = performance.now();
  const limits: DownloadLimits = {
    timeoutMs: options.timeoutMs ?? 60_000,
    maxBytes: options.maxBytes ?? 20_000_000,
    signal: options.signal,
  };
  const finish = (report: Omit<OwaspSyncReport, 'durationMs'>) => ({
    ...report,
    durationMs: Math.round(performance.now() - started),
  });
  if (!/^https?:\/\//i.test(options.from)) {
    const dir = path.resolve(options.from);
    const data = await readOwaspData(dir);
    const files = Object.fromEntries(OWASP_FILES.map((file) => [file, 'read' as const]));
    // Stored validators describe files read from a URL, not this folder's: forget them.
    return finish({ source: dir, files, ...(await write(db, data, [], options.now)) });
  }

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-owasp-'));
  try {
    const known = await readRequestStates(db, SCOPE);
    let downloads = await downloadAll(options.from, dir, known, limits, options.progress ?? NO_PROGRESS);
    const files = Object.fromEntries(
      downloads.map(
        (d) => [d.file, d.status === 200 ? 'downloaded' : d.status === 304 ? 'not modified' : 'absent'] as const,
      ),
    );
    const chapters = downloads[0]!;
    if (chapters.status === 404) throw new ImportError('chapters.json', undefined, `not found at ${chapters.url}`);
    const same = (d: Download) => d.status === 304 || (d.status === 404 && !known.has(d.url));
    if (downloads.every(same))
      return finish({
        source: options.from,
        files,
        owasp: null,
        changed: false,
        dataVersion: await readDataVersion(db),
      });
    // Something changed: the reader needs every file, so the unchanged ones are fetched again in full.
    const unchanged = downloads.filter((d) => d.status === 304).map((d) => d.file);
    const full = await downloadAll(options.from, dir, new Map(), limits, NO_PROGRESS, unchanged);
    downloads = downloads.map((d) => full.find((f) => f.file === d.file) ?? d);
    const data = await readOwaspData(dir);
    const states = downloads.flatMap((d) => (d.status === 404 ? [] : [d.state]));
    return finish({ source: options.from, files, ...(await write(db, data, states, options.now)) });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function downloadAll(
  base: string,
  dir: string,
  known: ReadonlyMap<string, RequestState>,
  limits: DownloadLimits,
  progress: SyncProgress,
  files: readonly string[] = OWASP_FILES,
): Promise<Download[]> {
  progress.start(files.length, 'files');
  try {
    const downloads: Download[] = [];
    for (const file of files) {
      const url = new URL(file, base.endsWith('/') ? base : `${base}/`).toString();
      downloads.push(await downloadFile(base, file, dir, known.get(url), limits));
      progress.advance(file);
    }
    return downloads;
  } finally {
    progress.stop();
  }
}

async function write(db: Db, data: OwaspData, states: RequestState[], now: () => Date = () => new Date()) {
  // The places of the chapters, read before the transaction rather than while it holds the write lock.
  await loadGazetteer();
  return db.transaction().execute(async (trx) => {
    await lockWrites(trx);
    const owasp = await writeOwaspData(trx, data);
    await replaceRequestStates(trx, SCOPE, states);
    const snapshots = await rebuildSnapshots(trx, now());
    const written = changedRows(owasp.counts) > 0 || snapshotsChanged(snapshots);
    if (written) await bumpDataVersion(trx);
    // A project's level, leaders and repositories are health inputs (docs/health.md).
    const health = await updateHealth(trx, now());
    const changed = written || health.changed > 0 || health.points > 0;
    return { owasp, changed, dataVersion: await readDataVersion(trx) };
  });
}
