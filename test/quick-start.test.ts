// Test tier: system (runs the README's `npm start`): `npm run test:system`, CI.
// The README's quick start, read from README.md (between the quick-start markers) and run literally by bash
// in the checkout: `npm install`, `npm start &`, and the line that keeps the key of `cds users create` in $KEY, shows
// it and calls the API with it; then a next call with $KEY, as the README suggests.
// Only the environment differs from a newcomer's: a fresh DATA_DIR, a free PORT (the curl line's port is
// rewritten to it), and npm kept offline (the dependencies are installed already). It must end in a 200.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv, freePort, ROOT } from './process.ts';
import { EMBEDDED_PASS_ONLY } from './helpers.ts';

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

test(
  'the README quick start gives an authenticated 200 from /api/v0/chapters/ in at most three commands, and a key for the next',
  { skip: EMBEDDED_PASS_ONLY },
  async (t) => {
    const commands = quickStartCommands(await fs.readFile(path.join(ROOT, 'README.md'), 'utf8'));
    assert.ok(commands.length <= 3, `${commands.length} commands`);
    assert.ok(
      commands.some((line) => line.includes('/api/v0/chapters/')),
      'it ends with a call to /api/v0/chapters/',
    );
    const port = await freePort();
    // Then what a newcomer does next in the same shell: another call with the key the quick start left in $KEY.
    const next = `curl -f -s -o /dev/null -H "X-API-Key: $KEY" 'http://127.0.0.1:8000/api/v0/search/?q=juice%20shop' && echo && echo NEXT-OK`;
    const script = [...commands, next].map((line) => line.replaceAll('127.0.0.1:8000', `127.0.0.1:${port}`)).join('\n');

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
    // The key is shown once, and kept for the next steps.
    const shown = /^Your API key: (\S+)$/m.exec(stdout);
    assert.ok(shown, `the key is shown\n${stdout.slice(0, 500)}`);
    assert.equal(stdout.split(shown[1]!).length - 1, 1, 'shown once');
    assert.match(stdout, /^NEXT-OK$/m, `a next call with $KEY is served\n${stdout.slice(-600)}`);
  },
);
