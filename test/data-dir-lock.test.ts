// Test tier: system (starts the server and `cds` as processes): `npm run test:system`, CI.
// The embedded database belongs to one process at a time: a second server on the same DATA_DIR is
// refused with a message naming the holder (a CLI command is run by the server instead), and a lock left by a dead process is
// taken over. (With DATABASE_URL there is no such lock: PostgreSQL serves many processes.)
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EMBEDDED_PASS_ONLY, seedDataDir } from './helpers.ts';
import { exited, freePort, runCli, runCliProcess, startServer, waitFor200 } from './process.ts';

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-lock-'));
await seedDataDir(dataDir); // a migrated database: no initdb in the server (the lock is the subject)
const lockFile = path.join(dataDir, 'pglite.lock');
after(() => fs.rm(dataDir, { recursive: true, force: true }));

test(
  'a second process on the same data folder is refused while the first runs, and starts once it has stopped',
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    const port = await freePort();
    // No bundled import: the lock is the subject here (server.test.ts covers the first start's import).
    const first = startServer({ DATA_DIR: dataDir, PORT: String(port), AUTO_IMPORT: 'false' });
    try {
      await waitFor200(`http://127.0.0.1:${port}/status/`, 120_000);
      assert.equal((await fs.readFile(lockFile, 'utf8')).trim(), String(first.pid));

      const second = startServer({ DATA_DIR: dataDir, PORT: String(await freePort()) });
      assert.equal(await exited(second), 1, second.output());
      assert.match(second.output(), new RegExp(`in use by process ${first.pid}`));

      // A cds command is not refused: the server runs it on its own connection (the admin channel).
      const cli = await runCliProcess(['status'], { DATA_DIR: dataDir });
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /^chapters\s+\d+\s+\d+$/m);

      // The first one never noticed.
      assert.equal((await fetch(`http://127.0.0.1:${port}/status/`)).status, 200);
    } finally {
      first.kill('SIGTERM');
    }
    assert.equal(await exited(first), 0, first.output());
    await assert.rejects(fs.access(lockFile), 'a clean stop removes the lock');

    // The folder is free again (run in this process: the lock file is the subject now, not a second process).
    const after = await runCli(['status'], { DATA_DIR: dataDir });
    assert.equal(after.code, 0, after.stderr);
  },
);

test('a lock left by a process that no longer runs is taken over', { skip: EMBEDDED_PASS_ONLY }, async () => {
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  await fs.writeFile(lockFile, `${gone.stdout}\n`);
  // `cds status` run in this process: the dead holder's lock is the subject, not which process takes it over.
  const result = await runCli(['status'], { DATA_DIR: dataDir });
  assert.equal(result.code, 0, result.stderr);
  await assert.rejects(fs.access(lockFile), 'released after the command');
});
