// Test tier: system (starts the server and `cds` as processes): `npm run test:system`, CI.
// `.env` of the current directory is read at start by the server and by cds (Node's process.loadEnvFile);
// a variable of the environment wins over the file's, even an empty one.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EMBEDDED_PASS_ONLY, seedDataDir } from './helpers.ts';
import { childEnv, CLI_ARGS, exited, freePort, run, SERVER_ARGS, waitFor200, type RunResult } from './process.ts';

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-dotenv-'));
after(() => fs.rm(tmp, { recursive: true, force: true }));

// cds run from another folder, whose .env is the one read (a process of its own: `.env` is read into the
// process's environment). Under `npm test` the compiled CLI, run alone bin/cds.js (see CLI_ARGS).
const cds = (cwd: string, args: string[], env: Record<string, string | undefined>): Promise<RunResult> =>
  run(process.execPath, [...CLI_ARGS, ...args], env, cwd);

/** childEnv empties DATA_DIR and friends; here the variables the file sets must be really absent. */
function withoutVariables(names: string[]): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, undefined]));
}

test(
  'cds reads .env of the current directory; the environment wins over it',
  { skip: EMBEDDED_PASS_ONLY },
  async () => {
    const dir = path.join(tmp, 'cli');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, '.env'), '# local settings\nDATA_DIR=./from-dotenv\nREST_AUTH=bogus\n');

    const refused = await cds(dir, ['migrate'], withoutVariables(['DATA_DIR', 'REST_AUTH']));
    assert.equal(refused.code, 1, "the file's bad REST_AUTH stops the command");
    assert.match(refused.stderr, /REST_AUTH must be one of required, optional, got "bogus"/);

    // The environment's DATA_DIR wins: the command opens that folder (migrated already: a new database would be
    // migrated now), and the file's folder is never created.
    const elsewhere = path.join(tmp, 'from-environment');
    await seedDataDir(elsewhere);
    const overridden = await cds(dir, ['migrate'], { DATA_DIR: elsewhere, REST_AUTH: 'optional' });
    assert.equal(overridden.code, 0, overridden.stderr);
    assert.match(overridden.stderr, /database is up to date/);
    await assert.rejects(fs.access(path.join(dir, 'from-dotenv')), "the file's DATA_DIR is not used");

    // Without it, the file's: a migrated database placed there is the one opened (a new one, anywhere else, would be
    // migrated now). Seeded: neither command pays an initdb.
    await seedDataDir(path.join(dir, 'from-dotenv'));
    const ran = await cds(dir, ['migrate'], { ...withoutVariables(['DATA_DIR']), REST_AUTH: 'optional' });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /database is up to date/);
    await assert.rejects(fs.access(path.join(dir, '.data')), 'nor the default one');
  },
);

test('an unreadable .env stops the command, naming it', { skip: EMBEDDED_PASS_ONLY }, async () => {
  const dir = path.join(tmp, 'unreadable');
  await fs.mkdir(path.join(dir, '.env'), { recursive: true }); // a folder where the file should be
  const result = await cds(dir, ['status'], { DATA_DIR: path.join(tmp, 'unused') });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /\.env cannot be read/);
});

test('the server reads .env at start', { skip: EMBEDDED_PASS_ONLY }, async () => {
  const dir = path.join(tmp, 'server');
  await fs.mkdir(dir);
  const port = await freePort();
  await fs.writeFile(path.join(dir, '.env'), `PORT=${port}\nDATA_DIR=./data\nAUTO_IMPORT=false\nREST_AUTH=optional\n`);
  // Not a first start (server.test has that): the folder the file names starts migrated (on the PGlite pass).
  await seedDataDir(path.join(dir, 'data'));
  const server = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: dir,
    env: childEnv(withoutVariables(['PORT', 'DATA_DIR'])),
  });
  let output = '';
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await waitFor200(`http://127.0.0.1:${port}/api/v0/chapters/`, 60_000);
  } finally {
    server.kill('SIGTERM');
    assert.equal(await exited(server), 0, output);
  }
});
