// `npm test` on Node 20 runs the tests on a current Node instead, when the embedded database is the engine.
// Node 20's V8 now and then traps inside PGlite's pg_trgm ("null function or function signature mismatch"): 2–6 of
// 30 search-heavy test files in each of 7 runs on Node 20.20.2, none in 30 each on Node 22 (1 run) and 24 (2 runs);
// docs/decisions.md, "pglite-trap". The PostgreSQL pass (DATABASE_URL) stays on the running Node, where it passes.
// TEST_NODE=<path of a node binary> runs them on that one; TEST_NODE=system on the running Node whatever its version.
// Otherwise the Node 24 that `npm install` brought (the optional dependency node-<platform>-<arch>, as `npm start` uses
// it: bin/current-node.js), else one installed once into node_modules/.cache/cds-node; if that fails (no registry),
// the tests run on the running Node with a warning.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { bundledNode } from '../../bin/current-node.js';

/** The first major version on which the embedded database's tests are reliable. */
const RELIABLE_MAJOR = 22;
const CURRENT_LTS = '24';

function installed(root) {
  const bundled = bundledNode(root);
  if (bundled) return bundled;
  const dir = path.join(root, 'node_modules/.cache/cds-node');
  const pkg = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  const bin = path.join(dir, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(bin)) {
    console.error(`npm test: installing Node ${CURRENT_LTS} (${pkg}) into ${path.relative(root, dir)}, once`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const args = ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', dir, `${pkg}@${CURRENT_LTS}`];
    spawnSync(npm, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return existsSync(bin) && spawnSync(bin, ['--version']).status === 0 ? bin : undefined;
}

/**
 * Runs this script again on a current Node when it should (see above) and resolves with that run's exit code;
 * resolves with undefined when the tests are to run here.
 */
export async function onCurrentNode(root) {
  const major = Number(process.versions.node.split('.')[0]);
  const chosen = process.env.TEST_NODE;
  if (chosen === 'system' || process.env.CDS_TEST_NODE_SWITCHED) return undefined;
  if (!chosen && (major >= RELIABLE_MAJOR || process.env.DATABASE_URL)) return undefined;
  const binary = chosen || installed(root);
  if (!binary) {
    console.error(
      `npm test: running on Node ${process.version}, whose V8 now and then traps inside the embedded database ` +
        `(docs/decisions.md, "pglite-trap"): a test may fail with a 503; use Node ${RELIABLE_MAJOR} or later`,
    );
    return undefined;
  }
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.error(`npm test: Node ${process.version} → the tests run on Node ${version} (${binary})`);
  const child = spawn(binary, process.argv.slice(1), {
    stdio: 'inherit',
    env: {
      ...process.env,
      CDS_TEST_NODE_SWITCHED: '1',
      PATH: `${path.dirname(binary)}${path.delimiter}${process.env.PATH ?? ''}`,
    },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}
