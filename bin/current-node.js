// The embedded database on a current Node (docs/decisions.md, "pglite-trap"): Node 20's V8 now and then traps inside
// PGlite, Node 22 and 24 never did in our runs. So on Node < 22, when the embedded database is the engine (no
// DATABASE_URL, in the environment or in .env), `npm start` (bin/start.js) and `cds` (bin/cds.js) run themselves again
// on the Node 24 that `npm install` brought: the optional dependency `node-<platform>-<arch>` (the official binary,
// published on the npm registry by the Node.js project's packagers). EMBEDDED_NODE=<path of a node binary> chooses
// another one; EMBEDDED_NODE=system keeps the running Node whatever its version. A PostgreSQL server (DATABASE_URL)
// needs none of this: the trap is PGlite's, and Node 20 runs the service there (CI's PostgreSQL pass).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseEnv } from 'node:util';

/** The first major version on which the embedded database is reliable. */
export const RELIABLE_MAJOR = 22;
const SWITCHED = 'CDS_ON_CURRENT_NODE';

/** A variable of the environment, else of `.env` in the current directory (config.ts reads it the same way). */
function setting(name) {
  if (process.env[name] !== undefined) return process.env[name];
  try {
    return parseEnv(readFileSync('.env', 'utf8'))[name];
  } catch {
    return undefined;
  }
}

/** The node binary of the optional dependency, when npm installed it (it is skipped on other platforms). */
export function bundledNode(root) {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const name = `node-${platform}-${process.arch}`;
  try {
    const manifest = createRequire(path.join(root, 'package.json')).resolve(`${name}/package.json`);
    const binary = path.join(path.dirname(manifest), 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The node binary to run on instead of this one; undefined to run here. `warn` hears why the running Node stays
 * when it should not (no current Node found).
 */
export function currentNode(root, warn = (message) => process.stderr.write(`${message}\n`)) {
  if (process.env[SWITCHED]) return undefined;
  const chosen = setting('EMBEDDED_NODE');
  if (chosen === 'system') return undefined;
  if (Number(process.versions.node.split('.')[0]) >= RELIABLE_MAJOR || setting('DATABASE_URL')) return undefined;
  const binary = chosen || bundledNode(root);
  if (binary && spawnSync(binary, ['--version']).status === 0) return binary;
  warn(
    chosen
      ? `EMBEDDED_NODE=${chosen} cannot be run: staying on Node ${process.version}`
      : `Node ${process.version} with the embedded database, and no Node ${RELIABLE_MAJOR}+ beside it (the optional ` +
          `dependency node-${process.platform}-${process.arch} is not installed): its V8 now and then fails inside ` +
          `the embedded database (docs/decisions.md, "pglite-trap"); use Node ${RELIABLE_MAJOR} or later`,
  );
  return undefined;
}

/**
 * Runs `args` on `binary` with this process's input and output, hands it SIGINT, SIGTERM and SIGHUP, and ends this
 * process with its exit code (a child killed by a signal: that signal, re-raised here).
 */
export function runOn(binary, args) {
  const child = spawn(binary, args, {
    stdio: 'inherit',
    env: {
      ...process.env,
      [SWITCHED]: '1',
      // A `node` that the child starts (npm, a script) is the same one.
      PATH: `${path.dirname(binary)}${path.delimiter}${process.env.PATH ?? ''}`,
    },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`cannot start ${binary}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('close', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}
