// How a server on the embedded database is getting on, for `cds --wait-for-server` (issue 45, item 2): the server
// writes DATA_DIR/cds-server.json as it starts (`starting`), once its admin channel answers (`ready`), when it gives
// up (`failed`, with the very line it prints on stderr) and as its process ends (`exited`, with the exit code). The
// waiting CLI reads it between its tries of the admin socket, so a server that cannot start (the port taken, a full
// disk) or died is reported within a second of it, in the server's own words, instead of after the whole wait.
// Written synchronously: the last state is written from the process's `exit` event, where nothing asynchronous runs.
import fs from 'node:fs';
import path from 'node:path';

export type StartState = 'starting' | 'ready' | 'failed' | 'exited';

export interface StartReport {
  pid: number;
  state: StartState;
  /** Milliseconds since the epoch, when this state was written. */
  at: number;
  /** `failed`: the server's own message; `exited`: absent. */
  message?: string;
  /** `exited`: the process's exit code. */
  code?: number;
}

export function startReportPath(dataDir: string): string {
  return path.join(dataDir, 'cds-server.json');
}

/** Writes this process's state; never throws (a report that cannot be written only makes a waiting CLI wait longer). */
export function reportStart(dataDir: string, state: StartState, extra: { message?: string; code?: number } = {}): void {
  const report: StartReport = { pid: process.pid, state, at: Date.now(), ...extra };
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    const file = startReportPath(dataDir);
    fs.writeFileSync(`${file}.${process.pid}`, `${JSON.stringify(report)}\n`);
    fs.renameSync(`${file}.${process.pid}`, file);
  } catch {
    // a read-only or missing folder: the server itself reports that
  }
}

/**
 * Reports `starting` now and `exited` when the process ends, unless it ended having reported `failed` (whose message
 * says more). Call once, as the server starts.
 */
export function reportServerLife(dataDir: string): void {
  let failed = false;
  reportStart(dataDir, 'starting');
  process.once('exit', (code) => {
    if (!failed) reportStart(dataDir, 'exited', { code });
  });
  reportFailure = (message) => {
    failed = true;
    reportStart(dataDir, 'failed', { message });
  };
}

/** Reports that the server gives up, with its message (a no-op before reportServerLife). */
export let reportFailure: (message: string) => void = () => {};

export function readStartReport(dataDir: string): StartReport | undefined {
  try {
    const report = JSON.parse(fs.readFileSync(startReportPath(dataDir), 'utf8')) as StartReport;
    return typeof report.pid === 'number' && typeof report.at === 'number' ? report : undefined;
  } catch {
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How long a waiting CLI gives a server to begin starting (to write `starting`): node and tsx start in this time. */
export const NO_SERVER_GRACE_MS = 30_000;
/** A report written this long before the CLI started still counts as the start it was launched with (`npm start &`). */
const FRESH_BEFORE_MS = 5_000;

/**
 * Why a CLI that has waited since `since` (ms) for a server on `dataDir` should stop waiting, or undefined to wait on:
 * a server that reported failing, or whose process is gone, after the CLI began waiting (or just before); or no
 * server started at all within NO_SERVER_GRACE_MS (then the last report, if it was a failure, is named).
 */
export function whyStopWaiting(dataDir: string, since: number, now = Date.now()): string | undefined {
  const report = readStartReport(dataDir);
  const alive = report !== undefined && isRunning(report.pid);
  if (report && alive && (report.state === 'starting' || report.state === 'ready')) return undefined;
  const fresh = report !== undefined && report.at >= since - FRESH_BEFORE_MS;
  if (report && fresh && report.state === 'failed')
    return `the server (process ${report.pid}) on ${dataDir} did not start: ${report.message ?? 'no reason given'}`;
  if (report && fresh && !alive)
    return (
      `the server (process ${report.pid}) on ${dataDir} exited` +
      `${report.code === undefined ? '' : ` with code ${report.code}`} before it was ready (see its output)`
    );
  if (now - since < NO_SERVER_GRACE_MS) return undefined;
  const last =
    report?.state === 'failed'
      ? `; the last one (process ${report.pid}, ${new Date(report.at).toISOString()}) failed: ${report.message}`
      : '';
  return `no server started on ${dataDir} within ${NO_SERVER_GRACE_MS / 1000} s (start one: npm start)${last}`;
}
