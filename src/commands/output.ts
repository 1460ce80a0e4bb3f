// Where a cds command writes and which database it uses. Run in the terminal: the process's stdout and
// stderr, and a database the command opens itself. Run by the server for a CLI on the admin channel
// (admin-channel.ts): the channel's streams and the server's own open database. Run in-process by the tests
// (run.ts): streams of their own, and a database the command opens itself.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Config } from '../config.ts';
import type { Database, Db } from '../db/index.ts';
import { openConfiguredDatabase } from '../startup.ts';
import { NO_PROGRESS, type SyncProgress } from '../data/base/sync-log.ts';

export interface CliContext {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The server's open database: commands use it instead of opening one (and never close it). */
  database?: Database;
  /** Empties the server's memory of valid keys at once after a revocation. */
  revoked?(): Promise<void>;
  /** Whether the caller's own streams are terminals (the CLI on the admin channel says so): tables or JSON. */
  terminal?: { stdout: boolean; stderr: boolean };
}

const context = new AsyncLocalStorage<CliContext>();

export function runInContext<T>(ctx: CliContext, work: () => Promise<T>): Promise<T> {
  return context.run(ctx, work);
}

export function out(text: string): void {
  const ctx = context.getStore();
  if (ctx) ctx.stdout(text);
  else process.stdout.write(text);
}

export function err(text: string): void {
  const ctx = context.getStore();
  if (ctx) ctx.stderr(text);
  else process.stderr.write(text);
}

/** The server's database when the command runs inside the server, else undefined. */
export function sharedDatabase(): Database | undefined {
  return context.getStore()?.database;
}

/** After a revocation: inside the server, its memory of valid keys is emptied at once. */
export async function keyRevoked(): Promise<void> {
  await context.getStore()?.revoked?.();
}

/**
 * True when the command's output goes to a terminal: this process's stream, or inside the server the stream of the
 * `cds` that sent the command (it writes what the server relays).
 */
export function isTerminal(stream: 'stdout' | 'stderr'): boolean {
  const ctx = context.getStore();
  return ctx ? ctx.terminal?.[stream] === true : Boolean(process[stream].isTTY);
}

/** Starts a progress bar on the terminal's stderr: the terminal's `cds` gives one (cli/progress.ts), the server none. */
export type ProgressBar = () => SyncProgress;

/** The progress of a long command: the terminal's bar when stderr is a terminal, else nothing (the server has none). */
export function progressOn(bar: ProgressBar | undefined): SyncProgress {
  return bar && isTerminal('stderr') ? bar() : NO_PROGRESS;
}

/** Runs `work` on the server's database inside the server, else on the configured one, opened and closed here. */
export async function withDatabase(
  config: Config,
  work: (db: Db, database: Database) => Promise<void>,
): Promise<number> {
  const shared = sharedDatabase();
  if (shared) {
    // Inside the server (admin channel): its database, already migrated, stays open.
    await work(shared.db, shared);
    return 0;
  }
  const database = await openConfiguredDatabase(config);
  try {
    await work(database.db, database);
    return 0;
  } finally {
    await database.close();
  }
}
