// The README's quick start, read from README.md (between the quick-start markers) and run literally by bash
// in the checkout: `npm install`, `npm start &`, and the curl line whose key comes from `cds users create`.
// Only the environment differs from a newcomer's: a fresh DATA_DIR, a free PORT (the curl line's port is
// rewritten to it), and npm kept offline (the dependencies are installed already). It must end in a 200.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv, freePort, ROOT } from './process.ts';

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-quick-'));
after(async () => {
  // The backgrounded server holds the data folder's lock: stop it by the process id written there.
  const pid = Number.parseInt(await fs.readFile(path.join(dataDir, 'pglite.lock'), 'utf8').catch(() => ''), 10);
  if (pid > 0) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
    for (
      let i = 0;
      i < 100 &&
      (await fs.access(path.join(dataDir, 'pglite.lock')).then(
        () => true,
        () => false,
      ));
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await fs.rm(dataDir, { recursive: true, force: true });
});

function quickStartCommands(readme: string): string[] {
  const begin = readme.indexOf('<!-- quick-start:begin -->');
  const end = readme.indexOf('<!-- quick-start:end -->');
  assert.ok(begin >= 0 && end > begin, 'README.md has the quick-start markers');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(begin, end));
  assert.ok(block, 'a sh code block between the markers');
  return block[1]!
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

test('the README quick start gives an authenticated 200 from /api/v0/chapters/ in at most three commands', async (t) => {
  const commands = quickStartCommands(await fs.readFile(path.join(ROOT, 'README.md'), 'utf8'));
  assert.ok(commands.length <= 3, `${commands.length} commands`);
  assert.ok(
    commands.some((line) => line.includes('/api/v0/chapters/')),
    'it ends with a call to /api/v0/chapters/',
  );
  const port = await freePort();
  const script = commands.map((line) => line.replaceAll('127.0.0.1:8000', `127.0.0.1:${port}`)).join('\n');

  const started = performance.now();
  const child = spawn('bash', ['-e', '-c', script], {
    cwd: ROOT,
    env: childEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'exit', not 'close': the backgrounded server keeps the pipes open.
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(`quick start: ${seconds.toFixed(1)} s from npm install to the 200 (dependencies already installed)`);

  assert.equal(code, 0, `curl -f failed (not a 200)\n${stderr}\n${stdout}`);
  assert.match(stdout, /\{"items":\[\{/, 'the chapters list');
  assert.doesNotMatch(stdout + stderr, /cds_[A-Za-z0-9_-]{20,}/, 'the raw key is not printed beside the answer');
});
