// Runs the real entry points (server, CLI) as child processes, and the CLI in this process (runCli).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli as runCliHere } from '../src/cli/run.ts';
import type { Database } from '../src/db/index.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for a child: the parent's, minus the variables the test must control. */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.NODE_TEST_CONTEXT;
  // Set empty rather than removed: an empty variable counts as unset, and a `.env` in the checkout cannot fill it in.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'DATA_DIR', 'NODE_ENV']) base[name] = '';
  return { ...base, LOG_LEVEL: 'warn', ...env };
}

// Under `npm test` (test/runner/run.js) the CLI and the server are also compiled to JavaScript, in CDS_TEST_BUILD:
// the same sources, started without tsx's loader (about half the CPU per start). Run alone, a test file
// starts them the way a user does: bin/cds.js, and src/server.ts through tsx.
const BUILD = process.env.CDS_TEST_BUILD || undefined;
// The processes the tests start live a few seconds: V8's optimizing compilers (TurboFan for JavaScript, and for
// the embedded database's WebAssembly beyond its baseline Liftoff) spend more CPU in background threads than
// they win back, and a larger young generation saves scavenges while node_modules load. Under `npm test` only:
// a server start costs ~1.6 s of CPU instead of ~2.7 s. Run alone, the processes start as a user's do.
const SHORT_LIVED: readonly string[] = BUILD ? ['--liftoff-only', '--no-opt', '--max-semi-space-size=32'] : [];

/** The arguments of `node` that start the CLI (followed by its own arguments). */
export const CLI_ARGS: readonly string[] = BUILD
  ? [...SHORT_LIVED, path.join(BUILD, 'src/cli/main.mjs')]
  : [path.join(ROOT, 'bin/cds.js')];
/** The arguments of `node` that start the server. */
export const SERVER_ARGS: readonly string[] = BUILD
  ? [...SHORT_LIVED, path.join(BUILD, 'src/server.mjs')]
  : ['--import', import.meta.resolve('tsx'), path.join(ROOT, 'src/server.ts')]; // (resolved: any working directory)

/**
 * `cds <args>` run in this process: the CLI's own runCli (src/cli/run.ts, what main.ts runs) on the environment
 * a child would get (childEnv), its stdout and stderr captured, its exit code returned. The command opens its
 * own database (or uses a running server's admin channel) exactly as the process does; what it saves is a
 * process start per command. What only a process shows (the binary, `.env` of its directory, signals, the
 * lock between processes) is tested with runCliProcess and the other helpers below.
 */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  /** `database`: an open database of the test for the command, instead of one it opens (CliOptions.database). */
  options: { database?: Database | undefined } = {},
): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCliHere(args, {
    env: childEnv(env),
    output: { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) },
    ...(options.database ? { database: options.database } : {}),
  });
  return { code, stdout, stderr };
}

/** `cds <args>` as a child process (see CLI_ARGS). */
export function runCliProcess(args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  return run(process.execPath, [...CLI_ARGS, ...args], env);
}

export function run(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd = ROOT,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function startServer(env: Record<string, string | undefined>): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: ROOT,
    env: childEnv(env),
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return Object.assign(child, { output: () => output });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Polls a URL until it answers 200 or the deadline passes; returns the elapsed milliseconds. */
export async function waitFor200(url: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return Date.now() - started;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** The first executable `name` in `dirs` (the PATH's by default); a missing one throws `missing`, what to install. */
export function findProgram(
  name: string,
  missing: string,
  dirs = (process.env.PATH ?? '').split(path.delimiter),
): string {
  for (const dir of dirs) {
    const candidate = path.join(dir || '.', name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  throw new Error(missing);
}
