// Test tier: system (starts the server and `cds` as processes): `npm run test:system`, CI.
// `cds --wait-for-server` stops waiting as soon as the server it waits for cannot start, and says why in the
// server's own words (issue 45, item 2): the server and the CLI are both real processes (spawn), on the embedded
// database of a fresh DATA_DIR (whatever the engine of the pass: the CLI waits only for a server on DATA_DIR).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { exited, freePort, runCliProcess, startServer } from './process.ts';
import { EMBEDDED_PASS_ONLY } from './helpers.ts';

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});
const freshDir = async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-wait-'));
  dirs.push(dir);
  return dir;
};

test(
  "a server whose port is taken: the waiting cds exits 1 within seconds of it, with the server's own line",
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const env = { DATA_DIR: await freshDir(), PORT: String(port), HOST: '127.0.0.1', AUTO_IMPORT: 'false' };
      const server = startServer(env);
      let serverEnded = 0;
      const serverExit = exited(server).then((code) => {
        serverEnded = Date.now();
        return code;
      });
      const waited = await runCliProcess(['--wait-for-server', 'status'], env);
      const cliEnded = Date.now();
      assert.equal(await serverExit, 1, server.output());
      assert.equal(waited.code, 1, waited.stderr);
      assert.match(
        waited.stderr,
        new RegExp(`did not start: cannot listen on 127\\.0\\.0\\.1:${port}: port ${port} is in use`),
      );
      assert.equal(waited.stdout, '');
      assert.ok(cliEnded - serverEnded < 5_000, `the CLI ended ${cliEnded - serverEnded} ms after the server`);
    } finally {
      taken.close();
    }
  },
);

test(
  'a server killed while it starts: the waiting cds exits 1 at once, saying the server exited before it was ready',
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    const env = { DATA_DIR: await freshDir(), PORT: String(await freePort()), AUTO_IMPORT: 'false' };
    const server = startServer(env);
    // Killed as soon as it has said it is starting (before the admin channel answers).
    const report = path.join(env.DATA_DIR, 'cds-server.json');
    const waiting = runCliProcess(['--wait-for-server', 'status'], env);
    while (
      !(await fs.access(report).then(
        () => true,
        () => false,
      ))
    )
      await new Promise((r) => setImmediate(r));
    server.kill('SIGKILL');
    await exited(server);
    const waited = await waiting;
    assert.equal(waited.code, 1, waited.stderr);
    assert.match(waited.stderr, new RegExp(`the server \\(process ${server.pid}\\) on .* exited before it was ready`));
  },
);
