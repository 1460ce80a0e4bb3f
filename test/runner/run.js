// `npm test`: compiles every test file (and the CLI and server the tests start) to JavaScript with esbuild,
// then runs them with Node's test runner, without tsx, in TEST_CONCURRENCY worker processes (test/runner/group.js)
// that take the files one at a time, longest first (by the durations of the last run).
// Why: a test process through tsx spends about twice the CPU to start (its loader hooks answer for every module,
// node_modules included), and a process of its own per file pays that start 74 times; the build takes a second.
// Arguments: test files to run (default: every `*.test.ts` under src/ and test/).
// If the build fails (a syntax error), the files run through tsx as before, so each failure is reported with its file.
// TEST_NODE_ARGS: more arguments of the worker processes' `node`, e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile
// them (and their PGlite threads); TEST_CPU_LOG (test/runner/group.js) logs each file's CPU seconds.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { onCurrentNode } from './current-node.js';
import { CACHED as DURATIONS, checkSeed, findTests, refreshSeed, SEED as SEED_DURATIONS, TIERS } from './durations.js';

/** When `npm test` began (test/runner/group.js logs the files' times from it). */
const STARTED = Date.now();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// On Node 20 with the embedded database, the run goes on on a current Node (test/runner/current-node.js).
const elsewhere = await onCurrentNode(ROOT);
if (elsewhere !== undefined) process.exit(elsewhere);
// `--tier quick|system|all` (test/runner/durations.js, TIERS): the files of a tier; `npm test` is the quick one.
// Files named run whatever their tier.
const argv = process.argv.slice(2);
const tierAt = argv.indexOf('--tier');
const tier = tierAt >= 0 ? argv[tierAt + 1] : 'quick';
if (!TIERS.includes(tier)) {
  console.error(`--tier must be one of ${TIERS.join(', ')}; got ${tier}`);
  process.exit(2);
}
const args = argv.filter((_, i) => tierAt < 0 || (i !== tierAt && i !== tierAt + 1));
const files = args.length > 0 ? args.map((file) => path.resolve(file)).sort() : findTests(tier);
if (files.length === 0) {
  console.error(`no test file in the ${tier} tier`);
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY || '2';
/**
 * The resident memory (MB) after which a worker takes no further file (test/runner/group.js): a third of the machine's
 * memory shared by the workers running at once, at most 4 GB. Fewer, longer-lived workers pay their start (Node,
 * the test runner, the embedded database's WebAssembly) and warm up V8's compilers fewer times: on 2 cores and
 * 24 GiB, 2 workers for the 82 files took 139 s against 167 s for 8 (docs/decisions.md, Tests).
 */
const MAX_RSS =
  process.env.TEST_WORKER_MAX_RSS ||
  String(Math.max(1000, Math.min(4000, Math.floor(os.totalmem() / 2 ** 20 / (3 * Number(concurrency))))));
/**
 * The embedded databases' shared_buffers (MB) in the run: theirs (test/helpers.ts, EMBEDDED) and those of the servers
 * and `cds` commands the tests start (they read it as a user's would). PGlite zeroes its buffers at every start: with
 * PostgreSQL's 128 MB an open took ~0.9 s of CPU on the CI machine, with 16 ~0.4 s.
 */
const SHARED_BUFFERS_MB = process.env.PGLITE_SHARED_BUFFERS_MB || '16';
/**
 * glibc's allocator in the test processes and the processes they start: memory freed stays in the process for the next
 * allocation (no `munmap` of blocks under 32 MB, no trim of the heap's top). On the CI machine, a virtual machine that
 * hands freed memory back to its host, a page touched again costs a fault of ~14 µs; the PGlite pass took ~7 million.
 * Measured on 12 in-process files, alternating, 3 runs each: 19 % fewer faults, 124 s of CPU against 132.
 * Values set in the environment win. (Asking for huge pages too, `glibc.malloc.hugetlb=1`, halved the faults but
 * not the time.)
 */
const MALLOC_ENV = {
  MALLOC_MMAP_THRESHOLD_: '33554432', // 32 MB, glibc's largest: smaller blocks come from the heap and are reused
  MALLOC_TRIM_THRESHOLD_: '4294967296',
  MALLOC_TOP_PAD_: '268435456',
};
const CACHE = path.join(ROOT, 'node_modules/.cache/cds-test');
/**
 * Node's compile cache (Node 22.1 and later; Node 20, the PostgreSQL pass's, ignores it) for the test processes and
 * every process and thread they start: the code V8 compiled for a module is kept on disk, keyed by the module's path
 * and checked against its text, and a later process that loads the same file skips the compile. A server or `cds`
 * started from the build, and each embedded database's worker thread, load the same modules (node_modules, the
 * bundles) again and again. Measured on a busy machine (load 10–20): a `cds status` process 1.50 s of CPU without,
 * 1.44 s with; 6 files that start servers and commands 88 s without, 76–78 s with, on a second try within the noise
 * (docs/decisions.md, Tests). Set in the environment, that one wins.
 */
const COMPILE_CACHE = process.env.NODE_COMPILE_CACHE || path.join(CACHE, 'compile');

/** Whether the process `pid` is running (0 or NaN: a lock file being written, taken as running). */
function running(pid) {
  if (!pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * The build folder of this run: `build-N`, the first one no running `npm test` holds (its `build-N.pid`). The same
 * path run after run, so that the compile cache (keyed by path) serves the bundles too; two runs at once in one
 * checkout each have their own.
 */
function takeBuildFolder() {
  mkdirSync(CACHE, { recursive: true });
  for (let slot = 0; ; slot++) {
    const lock = path.join(CACHE, `build-${slot}.pid`);
    for (;;) {
      try {
        writeFileSync(lock, String(process.pid), { flag: 'wx' });
        return { out: path.join(CACHE, `build-${slot}`), lock };
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
      }
      let owner;
      try {
        owner = Number(readFileSync(lock, 'utf8'));
      } catch {
        continue; // removed meanwhile: try again
      }
      if (running(owner)) break; // held: the next slot
      rmSync(lock, { force: true }); // left by a run that was killed
    }
  }
}
const { out: OUT, lock: LOCK } = takeBuildFolder();
// What an earlier run built there (bundles of files since removed, its queue).
rmSync(OUT, { recursive: true, force: true });

// Each bundle keeps the meaning of `import.meta.url` (and dirname, filename) of every source file in it:
// the literal location of that file in src/ or test/, so paths to data/, static files and package.json hold.
// The files that start a worker thread from the file beside their own (src/threads.ts), each with its worker.
const WORKER_HOSTS = new Map([
  ['src/db/embedded/pglite-host.ts', 'src/db/embedded/pglite-worker.ts'],
  ['src/data/geocode/geocode.gazetteer.ts', 'src/data/geocode/geocode.worker.ts'],
]);
const HOSTS = new Set([...WORKER_HOSTS.keys()].map((file) => path.join(ROOT, file)));
const keepImportMeta = {
  name: 'keep-import-meta',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      // The embedded database's host and the gazetteer's start their worker thread from the file beside their own:
      // the compiled worker of this build (an entry point below), not the .ts one (which would register tsx in every
      // thread).
      const file = HOSTS.has(args.path)
        ? path.join(OUT, path.relative(ROOT, args.path)).replace(/\.ts$/, '.mjs')
        : args.path;
      const meta = { url: pathToFileURL(file).href, dirname: path.dirname(file), filename: file };
      return {
        contents: source.replace(/\bimport\.meta\.(url|dirname|filename)\b/g, (_, key) => JSON.stringify(meta[key])),
        loader: 'ts',
      };
    });
  },
};

async function compile() {
  const { build, stop } = await import('esbuild');
  const entryPoints = [
    ...files,
    path.join(ROOT, 'src/cli/main.ts'),
    path.join(ROOT, 'src/server.ts'),
    ...[...WORKER_HOSTS.values()].map((file) => path.join(ROOT, file)),
  ];
  await build({
    entryPoints,
    outdir: OUT,
    outbase: ROOT,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false, // the maps name the files; their text would only make each bundle's map slower to load
    logLevel: 'error',
    plugins: [keepImportMeta],
  }).finally(() => stop()); // esbuild's service process is not needed during the tests
  return files.map((file) => path.join(OUT, path.relative(ROOT, file)).replace(/\.ts$/, '.mjs'));
}

/** The queue test/runner/group.js takes files from, longest first; returns the worker entries to run. */
function enqueue(compiled) {
  let durations = {};
  for (const file of [DURATIONS, SEED_DURATIONS]) {
    try {
      durations = JSON.parse(readFileSync(file, 'utf8'));
      break;
    } catch {
      // first run: no durations yet (then the seed's)
    }
  }
  const jobs = files.map((file, i) => ({ source: path.relative(ROOT, file), compiled: compiled[i] }));
  // A file not timed yet goes first: it may be a long one.
  const seconds = (job) => durations[job.source] ?? Infinity;
  jobs.sort((a, b) => seconds(b) - seconds(a) || a.source.localeCompare(b.source));
  mkdirSync(path.join(OUT, 'queue'), { recursive: true });
  mkdirSync(path.join(OUT, 'taken'), { recursive: true });
  jobs.forEach((job, i) => writeFileSync(path.join(OUT, 'queue', String(i).padStart(4, '0')), JSON.stringify(job)));
  // TEST_CONCURRENCY of them at a time, each taking files until TEST_FILES_PER_PROCESS (default: no limit) or its
  // memory cap (test/runner/group.js), plus as many spares for the files left by workers that stopped early; a spare that
  // finds the queue empty ends at once (~0.07 s of CPU). A worker grows ~50–60 MB a file from ~0.9 GB.
  const perProcess = Number(process.env.TEST_FILES_PER_PROCESS) || Infinity;
  const byMemory = Math.max(4, Math.floor((Number(MAX_RSS) - 900) / 60));
  const needed = Math.max(1, Math.ceil(jobs.length / Math.min(perProcess, byMemory)));
  const workers = Math.max(2 * needed, Number(concurrency) + 2);
  return Array.from({ length: workers }, (_, i) => {
    const entry = path.join(OUT, `worker-${i + 1}.mjs`);
    copyFileSync(path.join(ROOT, 'test/runner/group.js'), entry);
    return entry;
  });
}

function runTests(testFiles, env, execArgv) {
  const child = spawn(
    process.execPath,
    [
      ...execArgv,
      '--test',
      `--test-concurrency=${concurrency}`,
      process.env.TEST_REPORTER ?? '--test-reporter=./test/runner/reporter.js',
      ...testFiles,
    ],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: {
        ...MALLOC_ENV,
        ...process.env,
        PGLITE_SHARED_BUFFERS_MB: SHARED_BUFFERS_MB,
        NODE_COMPILE_CACHE: COMPILE_CACHE,
        ...env,
      },
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

/** On the PostgreSQL pass: the run's template databases (test/helpers.ts, serverTemplate). */
async function dropServerTemplates() {
  if (!process.env.DATABASE_URL) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  try {
    await client.connect();
    for (const kind of ['migrated', 'bundled'])
      await client.query(`DROP DATABASE IF EXISTS cds_template_${process.pid}_${kind} WITH (FORCE)`);
  } catch (error) {
    console.error(`could not drop the run's template databases: ${error instanceof Error ? error.message : error}`);
  } finally {
    await client.end().catch(() => {});
  }
}

let code;
let compiled;
try {
  compiled = await compile();
} catch (error) {
  console.error(
    `test build failed, running the files through tsx instead: ${error instanceof Error ? error.message : error}`,
  );
}
try {
  code = compiled
    ? await runTests(
        enqueue(compiled),
        {
          CDS_TEST_BUILD: OUT,
          CDS_TEST_RUN: String(process.pid),
          CDS_TEST_T0: String(STARTED),
          TEST_WORKER_MAX_RSS: MAX_RSS,
        },
        ['--enable-source-maps', ...(process.env.TEST_NODE_ARGS ?? '').split(' ').filter(Boolean)],
      )
    : await runTests(files, {}, ['--import', 'tsx']);
} finally {
  // The bundles stay for the next run (the compile cache's entries are theirs); the queue goes, and the lock.
  for (const dir of ['queue', 'taken']) rmSync(path.join(OUT, dir), { recursive: true, force: true });
  rmSync(LOCK, { force: true });
  await dropServerTemplates();
}
// After a full, passing run outside CI, a seed order (test/runner/durations.js) that lacks a test file or names a
// removed one is rewritten from this run's times. Only then: a rewrite after every run would leave the checkout changed
// by every `npm test`. CI's copy is thrown away with its machine.
if (args.length === 0 && code === 0 && !process.env.CI) {
  const { missing, stale } = checkSeed();
  if (missing.length > 0 || stale.length > 0) {
    refreshSeed();
    console.log(
      `test/runner/durations.json rewritten from this run (it lacked ${missing.length} test files and named ${stale.length} removed ones): commit it`,
    );
  }
}
process.exit(code);
