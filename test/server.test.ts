// Test tier: system (starts the server as a process): `npm run test:system`, CI.
// The server as a process: configuration errors, first start on an empty database, graceful stop.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { pgliteDir } from '../src/db/index.ts';
import { adminQuery, createTestDb, type TestDatabase } from './helpers.ts';
import { exited, freePort, run, SERVER_ARGS, startServer, waitFor200 } from './process.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

for (const [name, value] of [
  ['PORT', 'not-a-port'],
  ['DATABASE_URL', 'mysql://x'],
  ['REST_AUTH', 'sometimes'],
] as const) {
  test(`a bad ${name} stops start-up with a message naming it`, async () => {
    const result = await run(process.execPath, [...SERVER_ARGS], { [name]: value });
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`Invalid configuration: ${name}`));
  });
}

test('AUTH_DEV_LOGIN with NODE_ENV=production refuses to start', async () => {
  const result = await run(process.execPath, [...SERVER_ARGS], {
    AUTH_DEV_LOGIN: 'true',
    NODE_ENV: 'production',
  });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /AUTH_DEV_LOGIN/);
});

test('first start migrates and loads the bundled data, restarts reuse it, SIGTERM stops cleanly', async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-server-'));
  cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
  let database: TestDatabase | undefined;
  if (process.env.DATABASE_URL) {
    database = await createTestDb({ migrate: false });
    cleanups.push(() => database!.drop());
  }
  const env = { DATA_DIR: dataDir, DATABASE_URL: database?.url };

  for (const round of ['empty', 'populated']) {
    const port = await freePort();
    const server = startServer({ ...env, PORT: String(port) });
    try {
      await waitFor200(`http://127.0.0.1:${port}/status/`, 120_000);
      const status = (await (await fetch(`http://127.0.0.1:${port}/status/`)).json()) as {
        status: string;
        data_version: number;
      };
      assert.equal(status.status, 'ok', round);
      assert.equal(status.data_version, 1, `${round}: the data is loaded once, not again on restart`);
    } finally {
      server.kill('SIGTERM');
    }
    assert.equal(await exited(server), 0, `${round}: exit code after SIGTERM\n${server.output()}`);
  }
});

test('a busy port stops start-up with one line naming PORT, and no stack, before the database is opened', async () => {
  // An empty data folder, or a PostgreSQL database that does not exist: the port is looked at first, so neither is
  // touched (a first start would initdb, migrate and import for seconds before finding the port taken).
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-server-port-'));
  cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
  const name = `cds_test_never_${process.pid}`;
  const missing = process.env.DATABASE_URL
    ? Object.assign(new URL(process.env.DATABASE_URL), { pathname: `/${name}` }).toString()
    : undefined;
  // (Should a start ever make it, it goes.)
  if (missing) cleanups.push(() => adminQuery(`DROP DATABASE IF EXISTS ${name}`).then(() => {}));
  const port = await freePort();
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  try {
    const result = await run(process.execPath, [...SERVER_ARGS], {
      DATA_DIR: dataDir,
      DATABASE_URL: missing,
      PORT: String(port),
      AUTO_IMPORT: 'false',
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `^cannot listen on 127\\.0\\.0\\.1:${port}: port ${port} is in use by another process: stop it, or set PORT to a free port$`,
        'm',
      ),
    );
    assert.doesNotMatch(result.stderr, /database/i, 'the database was not looked at');
    if (missing) assert.equal((await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount, 0);
    else assert.ok(!existsSync(pgliteDir(dataDir)), 'no embedded database made');
    assert.doesNotMatch(result.stdout + result.stderr, /\n\s+at |"stack"/, 'no stack');
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
});
