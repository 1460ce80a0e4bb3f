// The embedded database's data folder and its lock: one process at a time in a folder (two PGlite instances writing
// the same files corrupt them), a lock left by a process that is gone taken over.
import fs from 'node:fs/promises';
import path from 'node:path';

/** Where the embedded database lives inside DATA_DIR. */
export function pgliteDir(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}

export class DataDirInUseError extends Error {
  constructor(
    readonly lockFile: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database ${path.dirname(lockFile)} is in use by process ${pid}: stop that process first ` +
        `(or, to run several processes on one database, use a PostgreSQL server through DATABASE_URL). ` +
        `If no such process exists, delete ${lockFile}.`,
    );
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  release(): Promise<void>;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dir>.lock` beside the PGlite folder, holding this process's id. A lock left by a process
 * that no longer runs (a crash, a kill -9) is taken over; one held by a live process is refused.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const file = `${dir}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fs.writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return {
        async release() {
          const holder = await fs.readFile(file, 'utf8').catch(() => '');
          if (Number.parseInt(holder, 10) === process.pid) await fs.rm(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = Number.parseInt(await fs.readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(pid) && pid > 0 && isRunning(pid)) throw new DataDirInUseError(file, pid);
    // Stale: its process is gone. Remove it and try again.
    await fs.rm(file, { force: true });
  }
  throw new Error(`could not take the lock ${file}`);
}
