// How many CPU cores this process may use: the machine's (os.availableParallelism(), which honours the CPU affinity
// mask) and, in a container, the CPU quota of its cgroup, whichever is less. A container limited to 1.5 CPUs on a
// 64-core host sees 64 in availableParallelism() and 2 here. The pools are sized from it (config.ts), and the server
// logs both at start.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Cores {
  /** What the pools are sized from: the least of the two below (at least 1). */
  usable: number;
  /** os.availableParallelism(). */
  machine: number;
  /** The cgroup's quota in CPUs, rounded up; undefined when there is none (or it cannot be read). */
  quota: number | undefined;
}

/** `root`: where the cgroup file systems are mounted (a test gives a folder of its own). */
export function availableCores(root = '/sys/fs/cgroup'): Cores {
  const machine = os.availableParallelism();
  const quota = cgroupV2Quota(root) ?? cgroupV1Quota(root);
  return { usable: Math.max(1, Math.min(machine, quota ?? machine)), machine, quota };
}

/** cgroup v2: `cpu.max` holds `<quota> <period>` in microseconds, or `max <period>` without a limit. */
function cgroupV2Quota(root: string): number | undefined {
  const text = read(path.join(root, 'cpu.max'));
  const [quota, period] = text?.trim().split(/\s+/) ?? [];
  return cpus(Number(quota), Number(period));
}

/** cgroup v1: `cpu.cfs_quota_us` (-1 without a limit) and `cpu.cfs_period_us` of the `cpu` controller. */
function cgroupV1Quota(root: string): number | undefined {
  for (const dir of ['cpu', 'cpu,cpuacct']) {
    const quota = read(path.join(root, dir, 'cpu.cfs_quota_us'));
    const period = read(path.join(root, dir, 'cpu.cfs_period_us'));
    if (quota !== undefined && period !== undefined) return cpus(Number(quota), Number(period));
  }
  return undefined;
}

function cpus(quota: number, period: number): number | undefined {
  return Number.isFinite(quota) && Number.isFinite(period) && quota > 0 && period > 0
    ? Math.ceil(quota / period)
    : undefined;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
