// The cores the pools are sized from: the cgroup's CPU quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us`) against the
// machine's, read from cgroup folders the test writes (the shape the kernel mounts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { availableCores } from './cores.ts';

const machine = os.availableParallelism();

function cgroup(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'cds-cgroup-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  return root;
}

test('a cgroup v2 quota of 1.5 CPUs gives 2 cores at most, never more than the machine has', () => {
  const cores = availableCores(cgroup({ 'cpu.max': '150000 100000\n' }));
  assert.deepEqual(cores, { usable: Math.min(machine, 2), machine, quota: 2 });
  assert.equal(availableCores(cgroup({ 'cpu.max': '50000 100000\n' })).usable, 1, 'half a CPU is one core');
  assert.equal(availableCores(cgroup({ 'cpu.max': `${(machine + 8) * 100000} 100000` })).usable, machine);
});

test('no limit (v2 "max", v1 -1), no cgroup, or a file that says nothing: the machine decides', () => {
  const cases: Record<string, string>[] = [
    { 'cpu.max': 'max 100000\n' },
    { 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' },
    {},
    { 'cpu.max': 'garbage' },
  ];
  for (const files of cases)
    assert.deepEqual(
      availableCores(cgroup(files)),
      { usable: machine, machine, quota: undefined },
      JSON.stringify(files),
    );
});

test('a cgroup v1 quota (cpu,cpuacct) counts as well', () => {
  const cores = availableCores(
    cgroup({ 'cpu,cpuacct/cpu.cfs_quota_us': '100000\n', 'cpu,cpuacct/cpu.cfs_period_us': '100000\n' }),
  );
  assert.deepEqual(cores, { usable: 1, machine, quota: 1 });
});
