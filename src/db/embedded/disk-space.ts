// Why a start failed, when the reason is the disk: PGlite's file system layer reports a full disk as an error with
// an empty message, which left start-up saying "cannot open the database: " and nothing else (issue 25).
import fs from 'node:fs/promises';
import path from 'node:path';

/** Below this, a failed open or migration of the embedded database is put down to the disk. */
const LOW_SPACE_BYTES = 64 * 2 ** 20;

/** Bytes free for this process on the file system that holds `dir` (or its nearest existing parent). */
export async function freeBytes(dir: string): Promise<number | undefined> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    try {
      const stats = await fs.statfs(current);
      return stats.bavail * stats.bsize;
    } catch {
      if (current === path.dirname(current)) return undefined;
    }
  }
}

/**
 * The message of an error of the embedded database's start, completed: with what the error carries when it has no
 * message, and with the free space of DATA_DIR's file system when it is nearly full.
 */
export async function explainEmbeddedFailure(error: unknown, dataDir: string): Promise<string> {
  const message = describeError(error);
  const free = await freeBytes(dataDir);
  if (free === undefined || free >= LOW_SPACE_BYTES) return message;
  const left = free < 2 ** 20 ? `${Math.floor(free / 1024)} kB` : `${Math.floor(free / 2 ** 20)} MB`;
  return (
    `${message ? `${message}; ` : ''}the disk of DATA_DIR (${dataDir}) is full or nearly (${left} free): ` +
    `free some space or set DATA_DIR to a folder on another disk`
  );
}

/**
 * An error's message, or what else it carries (a name, an errno, a code) when it has none: PGlite's file system layer
 * throws objects that are not Errors and have no message.
 */
export function describeError(error: unknown): string {
  if (error === null || typeof error !== 'object') return String(error);
  const { message, name, errno, code } = error as Record<string, unknown>;
  if (typeof message === 'string' && message) return message;
  const details = [
    typeof code === 'string' ? code : undefined,
    typeof errno === 'number' ? `errno ${errno}` : undefined,
  ].filter(Boolean);
  const label = typeof name === 'string' && name ? name : (error.constructor?.name ?? 'Error');
  if (details.length > 0) return `${label} (${details.join(', ')})`;
  return label === 'Error' || label === 'Object' ? '' : label;
}
