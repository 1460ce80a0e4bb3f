// One worker process of `npm test` (test/runner/run.js): takes test files one at a time from the run's queue (a folder
// of numbered files, each holding the path of a compiled test file; taking one is renaming it, which only one
// worker can do) and runs each inside a suite named after its source file, until the queue is empty. The
// suite scopes the file's top-level hooks (before, after, beforeEach) to that file's tests, so files run one
// after another here as they would in processes of their own; the process start is paid once per worker.
import { appendFileSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';

const build = process.env.CDS_TEST_BUILD;
if (!build) throw new Error('test/runner/group.js runs under test/runner/run.js (CDS_TEST_BUILD is not set)');
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

// A worker takes no further file after TEST_FILES_PER_PROCESS files (default: no limit) or once its resident memory
// passes TEST_WORKER_MAX_RSS megabytes (set by test/runner/run.js): what a file leaves behind (its bundle's code, which an
// ES module cannot unload, and heap not yet given back) grows with every file a worker runs. test/runner/run.js starts
// spare workers for the files one that stopped early left in the queue.
// TEST_CPU_LOG=<file>: appends each file's CPU seconds (user+sys of this process, its threads and the
// children it waited for, from /proc), the worker's RSS after it, its pid and its reused test databases so far
// (test/spare-db.ts), and when the file started and ended (seconds since `npm test` began; the first file of a worker
// also when its process started) to that file, to find where `npm test` spends its CPU and where it waits.
const cpuLog = process.env.TEST_CPU_LOG;
function cpuSeconds() {
  if (!cpuLog) return 0;
  // Fields 14-17 of /proc/self/stat: utime, stime, cutime, cstime, in clock ticks (100 per second on Linux).
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
}

const t0 = Number(process.env.CDS_TEST_T0) || performance.timeOrigin;
const since = (ms) => ((ms - t0) / 1000).toFixed(1);

// A file still running after TEST_FILE_TIMEOUT_S seconds (default 300; the longest takes ~30 s) ends this worker with
// a line naming it, and `npm test` fails: a test that waits forever (an embedded database that stopped answering) is
// a failure to read at once, not a CI run that ends at its time limit. The files left in the queue go to a spare worker.
const fileTimeoutMs = (Number(process.env.TEST_FILE_TIMEOUT_S) || 300) * 1000;
function watchdog(source) {
  const timer = setTimeout(() => {
    process.stderr.write(
      `\n${source}: still running after ${fileTimeoutMs / 1000} s (TEST_FILE_TIMEOUT_S); ending its worker (pid ${process.pid})\n`,
    );
    process.exit(1);
  }, fileTimeoutMs);
  timer.unref();
  return () => clearTimeout(timer);
}

const limit = Number(process.env.TEST_FILES_PER_PROCESS) || Infinity;
const maxRss = (Number(process.env.TEST_WORKER_MAX_RSS) || 1500) * 2 ** 20; // (1500: a worker run alone)
const more = (done) => done < limit && process.memoryUsage.rss() < maxRss;
for (let done = 0, next = take(); next; next = more(++done) ? take() : undefined) {
  const { source, compiled } = next;
  const before = cpuSeconds();
  const startedAt = Date.now();
  const done = watchdog(source);
  await describe(source, async () => {
    await import(pathToFileURL(compiled).href);
  });
  done();
  if (cpuLog) {
    const rss = Math.round(process.memoryUsage.rss() / 2 ** 20);
    // test/spare-db.ts: the embedded test databases this worker reused so far, and those it could not.
    const spares = globalThis[Symbol.for('cds-test-spare-db')];
    const reuse = spares ? `\treused ${spares.reused}, refused ${spares.refused}` : '';
    const span = `${done === 0 ? `process ${since(performance.timeOrigin)}, ` : ''}${since(startedAt)}-${since(Date.now())} s`;
    appendFileSync(
      cpuLog,
      `${source}\t${(cpuSeconds() - before).toFixed(1)}\t${rss} MB\t${process.pid}\t${span}${reuse}\n`,
    );
  }
}
// The test database kept for a next file (test/spare-db.ts) is closed once this worker takes no more: left open, its
// worker thread and pool kept the process alive ~10 s after its last file, while the next worker waited to start.
await globalThis[Symbol.for('cds-test-spare-db')]?.spare?.close();
// So is the Chromium of the browser files (test/chromium.ts, openChromium).
await globalThis[Symbol.for('cds-test-chromium')]?.then(
  (browser) => browser.close(),
  () => {},
);
// A file whose test failed half-way can leave a handle open (a client socket, an EventSource reconnecting to a server
// that is gone): the worker then never exits, and the run waits for it without end (the watchdog above stops at the
// end of the file). Once its files are done, a worker still alive after LINGER_MS names what holds it and ends.
const LINGER_MS = 30_000;
setTimeout(() => {
  const holding = process.getActiveResourcesInfo();
  process.stderr.write(
    `\nworker ${process.pid}: its files are done but it is still running after ${LINGER_MS / 1000} s, held by ` +
      `${holding.join(', ')} (a test left them open); ending it\n`,
  );
  process.exit(1);
}, LINGER_MS).unref();
