// The reporter of `npm test`: the runner's own spec output (with its counts), then the slowest test files
// and one summary line (`N passed, N failed, …`). The exit code stays the runner's own.
// TEST_DURATIONS=all lists every file's duration instead of the slowest ten.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { spec } from 'node:test/reporters';


const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** @param {AsyncIterable<{ type: string, data?: any }>} source */
export default async function* summaryReporter(source) {
  const started = performance.now();
  const inner = new spec();
  const output = [];
  inner.on('data', (chunk) => output.push(String(chunk)));
  const counts = { passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0 };
  const files = new Map();
  for await (const event of source) {
    inner.write(event);
    const data = event.data;
    if (data && (event.type === 'test:pass' || event.type === 'test:fail') && data.details?.type !== 'suite') {
      // A file's own entry (a failure outside any test, e.g. it does not load) counts as a failure.
      const isFile = data.nesting === 0 && data.file !== undefined && data.name === data.file;
      if (!isFile || event.type === 'test:fail') {
        if (data.skip !== undefined && data.skip !== false) counts.skipped++;
        else if (data.todo !== undefined && data.todo !== false) counts.todo++;
        else if (event.type === 'test:pass') counts.passed++;
        else if (data.details?.error?.failureType === 'cancelledByParent') counts.cancelled++;
        else counts.failed++;
      }
    }
    if (event.type === 'test:complete' && data?.nesting === 0 && data.file && data.name === data.file) {
      files.set(data.file, data.details?.duration_ms ?? 0);
    }
    if (output.length > 0) yield output.splice(0).join('');
  }
  inner.end();
  await new Promise((resolve) => (inner.readableEnded ? resolve(undefined) : inner.once('end', resolve)));
  if (output.length > 0) yield output.splice(0).join('');

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
