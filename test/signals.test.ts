// Test tier: system (starts the server and `npm start` as processes): `npm run test:system`, CI.
// What a process manager sends, through real processes (issue 13, F4): SIGTERM to `npm start` (npm
// forwards it; the script execs node so nothing sits between them), SIGINT to the node process, and
// SIGTERM to the service running as PID 1 of its own PID namespace, as in a container. Each time the
// server stops gracefully: it logs "stopped", leaves no process behind, frees its port and releases
// the embedded database's lock. `npm start` is the command line as users type it (node through tsx); the other
// two start the server as the other server tests do (SERVER_ARGS: under `npm test` its compiled build, which
// handles signals with the same code and costs about half the CPU to start).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv, exited, freePort, ROOT, SERVER_ARGS, waitFor200 } from './process.ts';
import { EMBEDDED_PASS_ONLY, seedDataDir } from './helpers.ts';

let dataDir = '';
const lockFile = () => path.join(dataDir, 'pglite.lock');

before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-signals-'));
  await seedDataDir(dataDir); // migrated already: the servers here start without an initdb
});
// Each server starts in a process group of its own: whatever a failed test leaves running (npm, the node under it)
// is killed as a group, here or at the end, so that no server outlives the test file and holds its process open.
const groups = new Set<number>();
const killGroup = (pid: number) => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
};

after(async () => {
  for (const pid of groups) killGroup(pid);
  await fs.rm(dataDir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  output: () => string;
  base: string;
}

async function start(command: string, args: string[]): Promise<Started> {
  const port = await freePort();
  // The embedded database (DATABASE_URL unset by childEnv): its lock shows whether the stop was clean.
  const child = spawn(command, args, {
    detached: true,
    cwd: ROOT,
    env: childEnv({ PORT: String(port), DATA_DIR: dataDir, AUTO_IMPORT: 'false', LOG_LEVEL: 'info' }),
  });
  if (child.pid !== undefined) groups.add(child.pid);
  let output = '';
  // The server logs "ready" just after it starts listening, so /status/ can answer before that line is read from
  // the pipe: start() waits for both, and no test reads the pid before the line has arrived.
  let sawReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (sawReady = resolve));
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('"msg":"ready"')) sawReady();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${base}/status/`, 60_000);
    const first = await Promise.race([ready.then(() => 'ready'), exited(child).then(() => 'exited')]);
    if (first === 'exited') throw new Error(`the server exited before its ready line:\n${output}`);
  } catch (error) {
    // Stopped here, or the server (and npm) would outlive the test and the test process would never end.
    if (child.pid !== undefined) killGroup(child.pid);
    throw error;
  }
  return { child, output: () => output, base };
}

/** The pid the server reported in its "ready" log line (as seen inside its PID namespace). */
function readyPid(output: string): number {
  const line = output.split('\n').find((l) => l.includes('"msg":"ready"'));
  assert.ok(line, `no ready line in\n${output}`);
  const ready = JSON.parse(line) as {
    pid: number;
    cores: { usable: number; machine: number };
    lists: { poolSize: number; queueLength: number };
  };
  // The line also says what the pools were sized from: the cores this process may use (a container's quota counts).
  assert.ok(ready.cores.usable >= 1 && ready.cores.usable <= ready.cores.machine, line);
  assert.ok(ready.lists.poolSize >= 1 && ready.lists.queueLength >= 0, line);
  return ready.pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function assertStoppedCleanly(started: Started, label: string): Promise<void> {
  assert.match(started.output(), /"msg":"stopped"/, `${label}: graceful stop logged\n${started.output()}`);
  assert.equal(existsSync(lockFile()), false, `${label}: the embedded database's lock is released`);
  await assert.rejects(fetch(`${started.base}/status/`), `${label}: the port is closed`);
}

test(
  'SIGTERM to `npm start` stops the server gracefully (npm forwards it to node)',
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    const started = await start('npm', ['start']);
    const serverPid = readyPid(started.output());
    assert.notEqual(serverPid, started.child.pid, 'node runs as a child of npm');
    started.child.kill('SIGTERM');
    await exited(started.child);
    for (let i = 0; i < 100 && alive(serverPid); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(serverPid), false, 'the node process is gone with npm');
    await assertStoppedCleanly(started, 'npm start');
  },
);

test('SIGINT to the node process stops it gracefully with exit code 0', { skip: EMBEDDED_PASS_ONLY }, async () => {
  const started = await start(process.execPath, [...SERVER_ARGS]);
  started.child.kill('SIGINT');
  assert.equal(await exited(started.child), 0);
  await assertStoppedCleanly(started, 'node SIGINT');
});

const canUnshare = process.getuid?.() === 0 && existsSync('/usr/bin/unshare');
test(
  'SIGTERM to the service running as PID 1 (a container) stops it gracefully',
  { skip: EMBEDDED_PASS_ONLY || (canUnshare ? false : 'needs root and unshare(1) to make a PID namespace') },
  async () => {
    const started = await start('unshare', ['--pid', '--fork', '--kill-child', process.execPath, ...SERVER_ARGS]);
    assert.equal(readyPid(started.output()), 1, 'the server is PID 1 of its namespace');
    const outside = Number(
      readFileSync(`/proc/${started.child.pid}/task/${started.child.pid}/children`, 'utf8').trim().split(' ')[0],
    );
    process.kill(outside, 'SIGTERM');
    assert.equal(await exited(started.child), 0);
    await assertStoppedCleanly(started, 'PID 1');
  },
);
