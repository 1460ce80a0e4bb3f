// test/runner/durations.json, the seconds each test file took on a quiet machine: the order of a fresh clone's first
// run (CI's), which has no node_modules/.cache/cds-test/durations-<engine>.json yet; each file's longer time of the
// two engines. A file it lacks runs first (it may be long)
// and a name it keeps of a removed file misleads, so it must name exactly the test files:
// - test/runner/run.js rewrites it from the run's durations after a full, passing run outside CI when it does not;
// - `npm run durations` (part of `npm run check`, no test run) fails when it lacks a test file or names a removed one;
// - `npm run durations -- --refresh` rewrites it from the last runs' durations (the cache), after a full run.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * Seconds each test file took in the last runs on this machine, one file per engine (written by
 * test/runner/reporter.js): a file of the PostgreSQL pass only (PgBouncer, replicas, Varnish, ~45–70 s there) skips
 * in ~0 s on the embedded database, and timed by the other pass it would go last, the run's long tail.
 */
const cachedFor = (engine) => path.join(ROOT, `node_modules/.cache/cds-test/durations-${engine}.json`);
/** This run's: `postgres` with DATABASE_URL, else `pglite`. */
export const CACHED = cachedFor(process.env.DATABASE_URL ? 'postgres' : 'pglite');
export const SEED = path.join(ROOT, 'test/runner/durations.json');

/**
 * The tiers of the suite (test/runner/README.md, Tiers). A file whose text has a line `// Test tier: system` is of the
 * system tier: it starts processes of its own (the server, `cds`, `npm`, Chromium, tsc, GDAL, a PostgreSQL, PgBouncer
 * or Varnish) or floods memory to prove a bound. Every other file is of the quick tier, what `npm test` runs.
 * `npm run test:system` runs the system tier, `npm run test:all` both; CI runs both on both engines.
 */
export const TIERS = ['quick', 'system', 'all'];
const SYSTEM_MARK = /^\/\/ Test tier: system\b/m;

/** The tier of a test file's text: 'system' or 'quick'. */
const tierOfText = (text) => (SYSTEM_MARK.test(text) ? 'system' : 'quick');

/** What a file of the quick tier must not use: the helpers that start the server, `cds`, PostgreSQL, Varnish, Chromium. */
const STARTS_PROCESSES =
  /\b(startServer|runCliProcess|startDumpsServer|startPrivatePostgres|startVarnish|openChromium|launchChromium|servedToChromium|SERVER_ARGS|CLI_ARGS)\b/;

/** The quick tier's files (relative) that use a helper starting a process: they belong to the system tier. */
export function checkTiers() {
  return findTests()
    .filter((file) => {
      const text = readFileSync(file, 'utf8');
      return tierOfText(text) === 'quick' && STARTS_PROCESSES.test(text);
    })
    .map((file) => path.relative(ROOT, file));
}

/** Every `*.test.ts` under src/ and test/ of the tier (default all), absolute. */
export function findTests(tier = 'all') {
  const found = [];
  for (const dir of ['src', 'test']) {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      if (entry.isFile() && entry.name.endsWith('.test.ts')) found.push(path.join(entry.parentPath, entry.name));
    }
  }
  return found.filter((file) => tier === 'all' || tierOfText(readFileSync(file, 'utf8')) === tier).sort();
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {}; // none yet
  }
}

/** The test files (relative to the root) the seed lacks, and the names it keeps of files that are gone. */
export function checkSeed() {
  const seed = readJson(SEED);
  const files = new Set(findTests().map((file) => path.relative(ROOT, file)));
  return {
    missing: [...files].filter((file) => !(file in seed)),
    stale: Object.keys(seed).filter((file) => !files.has(file)),
  };
}

/**
 * Rewrites the seed with the durations of the last runs (the cache) for every test file, longest first. Called after
 * a full, passing run, when the cache has every file; else a file it lacks keeps its seed value, or takes the median.
 */
export function refreshSeed() {
  // Each file's longer time of the two engines: the seed orders both passes (a file that skips goes first for nothing).
  const [pglite, postgres] = [readJson(cachedFor('pglite')), readJson(cachedFor('postgres'))];
  const seed = readJson(SEED);
  const longer = (a, b) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
  const known = findTests()
    .map((file) => path.relative(ROOT, file))
    .map((file) => [file, longer(pglite[file], postgres[file]) ?? seed[file]]);
  const times = known.map(([, seconds]) => seconds).filter((seconds) => typeof seconds === 'number');
  const median = times.sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 1;
  const entries = known
    .map(([file, seconds]) => [file, typeof seconds === 'number' ? seconds : median])
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  writeFileSync(SEED, `${JSON.stringify(Object.fromEntries(entries), null, 1)}\n`);
}

const files = (n) => `${n} test file${n === 1 ? '' : 's'}`;

// `npm run durations`: the check; with --refresh, the rewrite.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--refresh')) refreshSeed();
  const untiered = checkTiers();
  if (untiered.length > 0) {
    console.error(
      `${files(untiered.length)} of the quick tier start processes (the server, \`cds\`, PostgreSQL, Varnish, ` +
        `Chromium): ${untiered.join(', ')}. Mark each with a first line \`// Test tier: system (why)\` ` +
        '(test/runner/README.md, Tiers).',
    );
    process.exit(1);
  }
  const { missing, stale } = checkSeed();
  if (missing.length > 0 || stale.length > 0) {
    const said = [
      ...(missing.length > 0 ? [`lacks ${files(missing.length)}: ${missing.join(', ')}`] : []),
      ...(stale.length > 0 ? [`names ${files(stale.length)} that no longer exist: ${stale.join(', ')}`] : []),
    ];
    console.error(
      `test/runner/durations.json ${said.join('; and ')}.\n` +
        'Refresh it with a full, passing `npm test` outside CI (CI unset): the runner rewrites it from that run ' +
        '(test/runner/README.md).',
    );
    process.exit(1);
  }
  console.log('test/runner/durations.json names every test file.');
}
