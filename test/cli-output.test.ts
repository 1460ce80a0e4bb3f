// Test tier: system (runs `cds` as processes on a terminal): `npm run test:system`, CI.
// What the cds commands print for a person: tables with headers, a summary of import and sync (--text, the
// default on a terminal), the JSON report with --json, and a second revocation that says so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDb, seedDataDir, type TestDatabase } from './helpers.ts';
import { CLI_ARGS, ROOT, run, runCli } from './process.ts';

let env: Record<string, string | undefined>;
let tmp: string;
let database: TestDatabase | undefined;

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-out-'));
  if (process.env.DATABASE_URL) database = await createTestDb({ migrate: false });
  env = { DATA_DIR: path.join(tmp, 'data'), DATABASE_URL: database?.url };
  await seedDataDir(env.DATA_DIR!);
});
after(async () => {
  await database?.drop();
  await fs.rm(tmp, { recursive: true, force: true });
});

test('keys list is a table with headers; revoking a revoked key says so and changes nothing', async () => {
  const created = await runCli(['users', 'create', 'table-user', '--key', 'first key'], env);
  assert.equal(created.code, 0, created.stderr);
  const none = await runCli(['keys', 'list', '--user', 'nobody-here'], env);
  assert.equal(none.code, 1);

  const listed = await runCli(['keys', 'list', '--user', 'table-user'], env);
  assert.equal(listed.code, 0, listed.stderr);
  const lines = listed.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /^UUID {34}STATE {3}EXPIRES {19}LAST USED {2}NAME$/);
  const uuid = lines[1]!.slice(0, 36);
  assert.equal(lines[1]!.indexOf('active'), lines[0]!.indexOf('STATE'), 'columns aligned under their headers');
  assert.ok(lines[1]!.endsWith('first key'));

  const first = await runCli(['keys', 'revoke', uuid], env);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /^revoked /);
  const second = await runCli(['keys', 'revoke', uuid], env);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, new RegExp(`${uuid} was already revoked; nothing changed`));
});

test('import --text prints tables and a progress bar on a terminal, --json the report; both together are a usage error', async () => {
  // stderr on a pseudo-terminal (util-linux `script`), stdout to a file: the bar is drawn on the terminal only.
  const stdoutFile = path.join(tmp, 'import.out');
  const cds = [process.execPath, ...CLI_ARGS].map((word) => `'${word}'`).join(' ');
  const command = `${cds} import --text > '${stdoutFile}'`;
  const terminal = await run('script', ['-qec', command, '/dev/null'], env);
  assert.equal(terminal.code, 0, terminal.stdout + terminal.stderr);
  assert.match(terminal.stdout, /import \[[█░]+\] [0-5]\/5/, 'the bar, on the terminal');
  assert.match(terminal.stdout, /imported in \d+ ms; data version \d+/);
  const text = { stdout: await fs.readFile(stdoutFile, 'utf8') };
  assert.doesNotMatch(text.stdout, /█|░/, 'no bar in the output file');
  assert.match(text.stdout, /^OWASP website data\nRESOURCE\s+READ\s+NEW\s+UPDATED\s+DEACTIVATED\n/);
  assert.match(text.stdout, /^chapters\s+\d+\s+\d+\s+0\s+0$/m);
  assert.match(text.stdout, /^GitHub records\nRESOURCE\s+READ\s+NEW\s+UPDATED\s+DEACTIVATED\s+SKIPPED$/m);
  assert.match(text.stdout, /^snapshots: \d+/m);
  assert.match(text.stdout, /^health: \d+ projects \(\d+ changed, \d+ history points written\)$/m);

  const json = await runCli(['import', '--json'], env);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(JSON.parse(json.stdout).changed, false);
  assert.doesNotMatch(json.stderr, /\r|█|░/, 'no progress bar when stderr is not a terminal');

  const both = await runCli(['import', '--json', '--text'], env);
  assert.equal(both.code, 2);
});

test('sync owasp --text prints the summary and a table; --json the report', async () => {
  const from = path.join(ROOT, 'data', 'owasp');
  const text = await runCli(['sync', 'owasp', '--from', from, '--text'], env);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^OWASP website sync: files read from .*\n\nRESOURCE\s+READ/);
  const json = await runCli(['sync', 'owasp', '--json', '--from', from], env);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(typeof JSON.parse(json.stdout).durationMs, 'number');
});
