// The reporter of `npm test`: the runner's own spec output (with its counts), then the slowest test files
// and one summary line (`N passed, N failed, …`). The exit code stays the runner's own.
// TEST_DURATIONS=all lists every file's duration instead of the slowest ten.
// Under test/runner/run.js (CDS_TEST_BUILD set), each test file is a suite named after it in a worker process
// (test/runner/group.js): those suites are the files here, and the workers themselves are not.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { spec } from 'node:test/reporters';
import { CACHED as DURATIONS } from './durations.js';

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const build = process.env.CDS_TEST_BUILD;
const isWorker = (file) =>
  build !== undefined && path.dirname(file) === build && /^worker-\d+\.mjs$/.test(path.basename(file));

function saveDurations(files) {
  try {
    let saved = {};
    try {
      saved = JSON.parse(readFileSync(DURATIONS, 'utf8'));
    } catch {
      // none yet
    }
    for (const [file, ms] of files) saved[path.relative(ROOT, path.resolve(ROOT, file))] = Math.round(ms) / 1000;
    mkdirSync(path.dirname(DURATIONS), { recursive: true });
    writeFileSync(DURATIONS, `${JSON.stringify(saved, null, 1)}\n`);
  } catch {
    // only an ordering hint
  }
}

/** @param {AsyncIterable<{ type: string, data?: any }>} source */
export default async function* summaryReporter(source) {
  const started = performance.now();
  const inner = new spec();
  const output = [];
  inner.on('data', (chunk) => output.push(String(chunk)));
  const counts = { passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0 };
  const files = new Map();
  const workersWithFailedFiles = new Set();
  for await (const event of source) {
    const data = event.data;
    const worker = data?.nesting === 0 && data.file !== undefined && isWorker(data.file);
    // A test file: a file entry of the runner, or under test/runner/run.js a worker's suite named after a file.
    const isFile =
      data?.nesting === 0 && data.file !== undefined && (worker ? data.name !== data.file : data.name === data.file);
    // A worker's own entry is shown only when it failed (a spare that found no file left passes, with no test).
    if (!(worker && !isFile && event.type === 'test:pass')) inner.write(event);
    if (worker && !isFile) {
      // A worker's own entry fails when one of its files did, or when it died (counted then: files were lost).
      if (event.type === 'test:fail' && !workersWithFailedFiles.has(data.file)) counts.failed++;
      continue;
    }
    if (worker && event.type === 'test:fail') workersWithFailedFiles.add(data.file);
    if (
      data &&
      (event.type === 'test:pass' || event.type === 'test:fail') &&
      (data.details?.type !== 'suite' || (worker && isFile))
    ) {
      // A file's own entry (a failure outside any test, e.g. it does not load) counts as a failure.
      if (!isFile || event.type === 'test:fail') {
        if (data.skip !== undefined && data.skip !== false) counts.skipped++;
        else if (data.todo !== undefined && data.todo !== false) counts.todo++;
        else if (event.type === 'test:pass') counts.passed++;
        else if (data.details?.error?.failureType === 'cancelledByParent') counts.cancelled++;
        else counts.failed++;
      }
    }
    if (event.type === 'test:complete' && isFile)
      files.set(worker ? path.resolve(ROOT, data.name) : data.file, data.details?.duration_ms ?? 0);
    if (output.length > 0) yield output.splice(0).join('');
  }
  inner.end();
  await new Promise((resolve) => (inner.readableEnded ? resolve(undefined) : inner.once('end', resolve)));
  if (output.length > 0) yield output.splice(0).join('');

  saveDurations(files);
  // Files a worker never took (it died): failures, by name.
  let lost = [];
  try {
    if (build)
      lost = readdirSync(path.join(build, 'queue')).map(
        (name) => JSON.parse(readFileSync(path.join(build, 'queue', name), 'utf8')).source,
      );
  } catch {
    // no queue: not under test/runner/run.js
  }
  if (lost.length > 0) {
    counts.failed += lost.length;
    yield `\n${lost.length} test files did not run (their worker stopped): ${lost.join(', ')}\n`;
  }
  const ranked = [...files].sort((a, b) => b[1] - a[1]);
  const shown = process.env.TEST_DURATIONS === 'all' ? ranked : ranked.slice(0, 10);
  if (shown.length > 0) {
    yield `\n${shown.length === ranked.length ? 'test files' : `slowest ${shown.length} of ${ranked.length} test files`} (wall time of each):\n`;
    for (const [file, ms] of shown) yield `  ${seconds(ms).padStart(8)}  ${path.relative(process.cwd(), file)}\n`;
  }
  // The last line alone is the plain closing line CI reads: `N passed, N failed` (and `, N skipped`).
  const extra = [];
  if (counts.cancelled) extra.push(`${counts.cancelled} cancelled`);
  if (counts.todo) extra.push(`${counts.todo} todo`);
  yield `\n${files.size} test files in ${seconds(performance.now() - started)}${extra.length ? `; ${extra.join(', ')}` : ''}\n`;
  yield `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}\n`;
}
