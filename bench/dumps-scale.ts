// The bulk dumps at scale (issue 28, item 1), a phase of `npm run bench:scale` (ONLY=dumps): `cds dumps build` as a
// process of its own on the generated database (1M issues, 100,000 members and repositories, 50,000 releases), into
// a fresh folder, then again with nothing changed (every file kept). Records per second of the build (the command's
// own report: its database work, compression and writing, not the process start) and the process's peak RSS (VmHWM
// polled, and GNU time's maximum). Goal (issue 28): ≥ 100,000 records/s, peak RSS ≤ 300 MB.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { run } from './scale-import.ts';

interface BuildReport {
  records: number;
  durationMs: number;
  items: { resource: string; records: number; bytes: number; built: boolean; ms: number }[];
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export async function dumpsScalePhase(root: string, url: string): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-scale-dumps-'));
  try {
    console.log(`## Dumps: \`cds dumps build\` (a child process) on the generated database; load average ${load()}\n`);
    console.log('| build | records | seconds (build) | records/s | seconds (process) | peak RSS MB | exit |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    let first: BuildReport | undefined;
    for (const label of ['first, into an empty folder', 'again, nothing changed']) {
      const result = await run(root, url, ['dumps', 'build', '--json'], { DUMPS_DIR: dir });
      if (result.exitCode !== 0) {
        console.log(`| ${label} | | | | | | ${result.exitCode} |`);
        continue;
      }
      const report = JSON.parse(result.stdout) as BuildReport;
      first ??= report;
      console.log(
        `| ${label} | ${report.records} | ${(report.durationMs / 1000).toFixed(1)} | ${Math.round(report.records / (report.durationMs / 1000))} | ${result.seconds.toFixed(1)} | ${Math.round(result.peakMb)} | 0 |`,
      );
    }
    if (first) {
      console.log('\n| resource | records | MB (gzip) | seconds | records/s |');
      console.log('|---|---:|---:|---:|---:|');
      for (const item of first.items.filter((i) => i.records >= 1000))
        console.log(
          `| ${item.resource} | ${item.records} | ${(item.bytes / 1e6).toFixed(1)} | ${(item.ms / 1000).toFixed(1)} | ${Math.round(item.records / (item.ms / 1000))} |`,
        );
    }
    console.log(`\nLoad average after: ${load()}\n`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
