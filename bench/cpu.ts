// CPU time of processes, read from /proc (Linux): what the benchmarks divide by the requests a run answered.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import pg from 'pg';

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

/**
 * The CPU time (µs) of each PostgreSQL backend serving the database of `url`, but the connection that asks: the
 * processes of the pool of whatever is being measured, while only it uses that database. Unlike postgresPids, it
 * counts no session of another database of the same cluster (another bench, a test run) and no backend that ended
 * meanwhile (all of those go to the postmaster's cutime).
 */
export async function backendMicros(url: string): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    const micros = new Map<number, number>();
    for (const { pid } of rows) {
      const used = await cpuMicros([pid]);
      if (used > 0) micros.set(pid, used);
    }
    return micros;
  } finally {
    await client.end();
  }
}

/**
 * The CPU the database's backends used between two readings of backendMicros: a backend that started meanwhile counts
 * all of its time; one that ended meanwhile is not in the second reading and counts nothing (a pool keeps its
 * connections open through a measured row).
 */
export function backendMicrosBetween(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, micros] of after) used += micros - (before.get(pid) ?? 0);
  return used;
}
