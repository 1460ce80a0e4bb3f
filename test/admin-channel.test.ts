// Test tier: system (starts the server and `cds` as processes): `npm run test:system`, CI.
// cds while the server runs on the embedded database: commands go over DATA_DIR/cds.sock and run inside the
// server (src/commands/admin-channel.ts, src/cli/forward.ts). Also `cds users create` and `--help` after a command.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EMBEDDED_PASS_ONLY, seedDataDir } from './helpers.ts';
import { CLI_ARGS, exited, freePort, run, runCli, runCliProcess, startServer, waitFor200 } from './process.ts';

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-admin-'));
// The bundled data already there (the first start's initdb and import are server.test.ts's subject).
await seedDataDir(dataDir, 'bundled');
const socketFile = path.join(dataDir, 'cds.sock');
let port: number;
let server: ReturnType<typeof startServer>;

before(async () => {
  if (EMBEDDED_PASS_ONLY) return;
  port = await freePort();
  server = startServer({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' });
  await waitFor200(`http://127.0.0.1:${port}/status/`, 120_000);
});
after(async () => {
  if (server) {
    server.kill('SIGTERM');
    await exited(server);
  }
  await fs.rm(dataDir, { recursive: true, force: true });
});

function chapters(key: string) {
  return fetch(`http://127.0.0.1:${port}/api/v0/chapters/?limit=1`, { headers: { 'X-API-Key': key } });
}

test(
  'users create --key, keys list and keys revoke run inside the running server',
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    const created = await runCli(['users', 'create', 'alice', '--key', 'laptop'], { DATA_DIR: dataDir });
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /created user alice/);
    const key = created.stdout.trim();
    assert.match(key, /^cds_/);
    assert.equal((await chapters(key)).status, 200);

    const again = await runCli(['users', 'create', 'ALICE'], { DATA_DIR: dataDir });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /user alice already exists/);

    const list = await runCli(['keys', 'list', '--user', 'alice'], { DATA_DIR: dataDir });
    assert.equal(list.code, 0, list.stderr);
    const uuid = /([0-9a-f-]{36})/.exec(list.stdout)?.[1];
    assert.ok(uuid, list.stdout);
    const revoked = await runCli(['keys', 'revoke', uuid], { DATA_DIR: dataDir });
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await chapters(key)).status, 401);

    assert.doesNotMatch(server.output(), new RegExp(key), 'the raw key never reaches the server log');
    assert.match(server.output(), /cds command on the admin channel/);
  },
);

test('usage errors come back with exit 2', { skip: EMBEDDED_PASS_ONLY }, async () => {
  const bad = await runCli(['users', 'create', 'no spaces allowed'], { DATA_DIR: dataDir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /LOGIN must be/);
  const unknown = await runCli(['keys', 'frobnicate'], { DATA_DIR: dataDir });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Usage: cds keys/);
});

test(
  'the socket is private to its owner and a malformed request changes nothing',
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    assert.equal((await fs.stat(socketFile)).mode & 0o777, 0o600);
    for (const payload of ['not json\n', '{"args": "status"}\n', '{"args": []}\n', '{"args": ["serve"]}\n']) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(socketFile);
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
        socket.write(payload);
      });
      const last = JSON.parse(answer.trim().split('\n').at(-1)!) as { exit: number };
      assert.ok(last.exit === 1 || last.exit === 2, `${payload} → ${answer}`);
    }
    assert.equal((await fetch(`http://127.0.0.1:${port}/status/`)).status, 200);
  },
);

test(
  "--help after a command or subcommand prints that command's usage and exits 0",
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    for (const args of [
      ['sync', '--help'],
      ['sync', 'github', '--help'],
      ['keys', 'create', '-h'],
      ['users', '--help'],
    ]) {
      const result = await runCli(args, { DATA_DIR: dataDir });
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stdout, new RegExp(`Usage: cds ${args[0]}`));
    }
  },
);

test(
  "on the server, a command prints tables to a caller's terminal and JSON to a pipe, as it would alone",
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    // Through a pseudo-terminal (util-linux `script`): the caller's stdout is a terminal, and the server knows it.
    const line = [process.execPath, ...CLI_ARGS, 'import']
      .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
      .join(' ');
    const onTerminal = await run('script', ['-qec', line, '/dev/null'], { DATA_DIR: dataDir });
    assert.equal(onTerminal.code, 0, onTerminal.stdout);
    assert.match(onTerminal.stdout, /OWASP website data/);
    assert.doesNotMatch(onTerminal.stdout, /^\{/m);
    // The same command into a pipe: JSON, the report whole.
    const piped = await runCliProcess(['import'], { DATA_DIR: dataDir });
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(JSON.parse(piped.stdout).changed, false);
    assert.match(server.output(), /cds command on the admin channel/);
  },
);
