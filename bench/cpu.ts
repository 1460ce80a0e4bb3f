// CPU time of processes, read from /proc (Linux): what the benchmarks divide by the requests a run answered.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';

/** Clock ticks per second of /proc's times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/**
 * User + system CPU time of processes, in µs, with that of their children that ended (a PostgreSQL backend that a
 * connection started and ended is in its postmaster's cutime and cstime). A process gone meanwhile counts nothing.
 */
export async function cpuMicros(pids: readonly number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    // The fields after the command's name: utime, stime, cutime and cstime are the 12th to the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1_000_000) / CLOCK_TICKS;
}

/** PostgreSQL's processes on this machine (its postmaster and every backend). */
export function postgresPids(): number[] {
  return spawnSync('pgrep', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
}
