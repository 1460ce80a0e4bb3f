// One worker process of `npm test` (test/run.js): takes test files one at a time from the run's queue (a folder
// of numbered files, each holding the path of a compiled test file; taking one is renaming it, which only one
// worker can do) and runs each inside a suite named after its source file, until the queue is empty. The
// suite scopes the file's top-level hooks (before, after, beforeEach) to that file's tests, so files run one
// after another here as they would in processes of their own; the process start is paid once per worker.
import { appendFileSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';

const build = process.env.CDS_TEST_BUILD;
if (!build) throw new Error('test/group.js runs under test/run.js (CDS_TEST_BUILD is not set)');
const queue = path.join(build, 'queue');
const taken = path.join(build, 'taken');

function take() {
  for (const name of readdirSync(queue).sort()) {
    const mine = path.join(taken, `${name}-${process.pid}`);
    try {
      renameSync(path.join(queue, name), mine);
    } catch {
      continue; // another worker took it first
    }
    return JSON.parse(readFileSync(mine, 'utf8'));
  }
  return undefined;
}

// At most TEST_FILES_PER_PROCESS files (default 4) per worker: memory a file leaves behind (an embedded
// PGlite is not given back at once) would otherwise grow with every file a worker runs.
// TEST_CPU_LOG=<file>: appends each file's CPU seconds (user+sys of this process, its threads and the
// children it waited for, from /proc) to that file, to find where `npm test` spends its CPU.
const cpuLog = process.env.TEST_CPU_LOG;
function cpuSeconds() {
  if (!cpuLog) return 0;
  // Fields 14-17 of /proc/self/stat: utime, stime, cutime, cstime, in clock ticks (100 per second on Linux).
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
}

const limit = Number(process.env.TEST_FILES_PER_PROCESS) || 4;
for (let done = 0, next = take(); next; next = ++done < limit ? take() : undefined) {
  const { source, compiled } = next;
  const before = cpuSeconds();
  await describe(source, async () => {
    await import(pathToFileURL(compiled).href);
  });
  if (cpuLog) appendFileSync(cpuLog, `${source}\t${(cpuSeconds() - before).toFixed(1)}\n`);
}
