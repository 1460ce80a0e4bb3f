// `cds dumps build --json` of two or more checkouts on one kept database, alternated (a loaded machine's wall clock
// says little: compare the CPU). For each build: records/s, the issues dump's records/s, the process's CPU and peak
// RSS (GNU time), PostgreSQL's CPU for the build (the schedstat of this database's backends and their parallel
// workers, polled every 100 ms until they end), the load average; at the end, whether every checkout wrote the same
// files (their names carry their SHA-256). Linux only (/proc).
//
//   npx tsx bench/dumps-ab.ts DATABASE ROUNDS CHECKOUT…      e.g. cds_scale_92cc51953e 3 /tmp/base .
//
// DATABASE: a database of the PostgreSQL server at 127.0.0.1:5432 (`KEEP=1 ONLY=dumps npm run bench:scale` leaves one).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [database, rounds = '2', ...checkouts] = process.argv.slice(2);
if (!database || checkouts.length === 0) throw new Error('usage: dumps-ab.ts DATABASE ROUNDS CHECKOUT…');
const url = `postgres://postgres@127.0.0.1:5432/${database}`;

const read = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** This database's backends and their parallel workers: CPU seconds so far, by pid. */
function backendsCpu(into: Map<number, number>): void {
  const pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  const commands = new Map(pids.map((pid) => [Number(pid), read(`/proc/${pid}/cmdline`)]));
  const ours = new Set([...commands].filter(([, cmd]) => cmd.includes(` postgres ${database} `)).map(([pid]) => pid));
  for (const [pid, cmd] of commands) {
    const leader = /parallel worker for PID (\d+)/.exec(cmd)?.[1];
    if (leader && ours.has(Number(leader))) ours.add(pid);
  }
  for (const pid of ours) {
    const stat = read(`/proc/${pid}/schedstat`);
    if (stat) into.set(pid, Number(stat.split(' ')[0]) / 1e9);
  }
}

interface Report {
  records: number;
  durationMs: number;
  items: { resource: string; records: number; ms: number }[];
}

const filesOf = new Map<string, string>();
for (let round = 1; round <= Number(rounds); round++) {
  for (const checkout of checkouts) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cds-dumps-ab-'));
    const timeFile = `${dir}.time`;
    const load = os.loadavg()[0]!.toFixed(1);
    const cpu = new Map<number, number>();
    const child = spawn(
      '/usr/bin/time',
      ['-f', '%U %S %M', '-o', timeFile, process.execPath, 'bin/cds.js', 'dumps', 'build', '--json'],
      {
        cwd: path.resolve(checkout),
        env: { ...process.env, DATABASE_URL: url, REDIS_URL: '', LOG_LEVEL: 'warn', DUMPS_DIR: dir },
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const poll = setInterval(() => backendsCpu(cpu), 100);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearInterval(poll);
    try {
      if (code !== 0) throw new Error(`${checkout}: cds dumps build exited with ${code}`);
      const [user, system, kb] = read(timeFile).trim().split('\n').pop()!.split(' ').map(Number);
      const report = JSON.parse(stdout) as Report;
      const manifest = JSON.parse(read(path.join(dir, 'manifest.json'))) as { items: { file: string }[] };
      const files = manifest.items.map((item) => item.file).join(' ');
      if (!filesOf.has(checkout)) filesOf.set(checkout, files);
      const issues = report.items.find((item) => item.resource === 'issues');
      const rate = (records: number, ms: number) => Math.round(records / (ms / 1000));
      const postgres = [...cpu.values()].reduce((sum, seconds) => sum + seconds, 0);
      console.log(
        `${checkout}, round ${round}: ${rate(report.records, report.durationMs)} records/s` +
          `${issues ? `, issues ${rate(issues.records, issues.ms)}/s` : ''}; process CPU ${(user! + system!).toFixed(1)} s,` +
          ` peak ${Math.round(kb! / 1024)} MB; PostgreSQL CPU ${postgres.toFixed(1)} s (${cpu.size} processes);` +
          ` load ${load}; the files of its first round: ${filesOf.get(checkout) === files}`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(timeFile, { force: true });
    }
  }
}
const written = [...filesOf.values()];
console.log(`every checkout wrote the same files: ${written.every((files) => files === written[0])}`);
