// Test tier: system (runs `cds` as processes): `npm run test:system`, CI.
// The cds command as an operator runs it: exit codes, messages, and its effect on the database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDb, seedDataDir, type TestDatabase } from './helpers.ts';
import { ROOT, runCli, runCliProcess } from './process.ts';
import { USAGE } from '../src/commands/usage.ts';
import type { ResourceCount } from '../src/commands/cds-status.queries.ts';

let env: Record<string, string | undefined>;
let tmp: string;
let database: TestDatabase | undefined;

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-cli-'));
  if (process.env.DATABASE_URL) database = await createTestDb({ migrate: false });
  env = { DATA_DIR: path.join(tmp, 'data'), DATABASE_URL: database?.url };
  // An initdb'd folder, not migrated: what migrate applies is the subject, not the initdb (server.test.ts has that).
  if (!database) await seedDataDir(env.DATA_DIR!, 'empty');
});
after(async () => {
  await database?.drop();
  await fs.rm(tmp, { recursive: true, force: true });
});

/** `cds status`'s table: per resource, the stored count (`published` gives the other column, NaN for `-`). */
function counts(stdout: string, column: 'stored' | 'published' = 'stored'): Record<string, number> {
  const [header, ...lines] = stdout.trim().split('\n');
  assert.deepEqual(header!.trim().split(/\s+/), ['resource', 'stored', 'published']);
  return Object.fromEntries(
    lines.map((line) => {
      const [name, stored, published] = line.trim().split(/\s+/);
      return [name, Number(column === 'stored' ? stored : published)];
    }),
  );
}

test('usage errors exit 2 with a message on stderr', async () => {
  for (const args of [[], ['frobnicate'], ['import', '--nope'], ['status', 'extra']]) {
    const result = await runCli(args, env);
    assert.equal(result.code, 2, args.join(' '));
    assert.match(result.stderr + result.stdout, /Usage: cds/);
  }
});

test('a bad configuration exits 1 naming the variable (a real process: its exit code and stderr)', async () => {
  const result = await runCliProcess(['status'], { ...env, DATABASE_URL: 'mysql://nope' });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /DATABASE_URL/);
});

test('migrate, then status on an empty database, then import, then status again', async () => {
  const migrate = await runCli(['migrate'], env);
  assert.equal(migrate.code, 0, migrate.stderr);
  assert.match(migrate.stderr, /applied: 0001_data_model, 0002_accounts, 0003_search_indexes, 0004_sync_state/);
  assert.match((await runCli(['migrate'], env)).stderr, /up to date/);

  const empty = await runCli(['status'], env);
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(counts(empty.stdout).chapters, 0);

  const imported = await runCli(['import'], env);
  assert.equal(imported.code, 0, imported.stderr);
  const report = JSON.parse(imported.stdout);
  assert.equal(report.changed, true);

  const status = await runCli(['status'], env);
  const full = counts(status.stdout);
  const published = counts(status.stdout, 'published');
  for (const name of [
    'chapters',
    'committees',
    'events',
    'projects',
    'sponsors',
    'organizations',
    'members',
    'repositories',
    'issues',
    'labels',
    'milestones',
    'releases',
  ]) {
    assert.ok(full[name]! > 0, `${name} is empty after import`);
    assert.ok(published[name]! > 0 && published[name]! <= full[name]!, `${name}: ${published[name]} published`);
  }
  // The bundled data has inactive projects and chapters without coordinates: stored and published differ, and say why.
  assert.ok(published.projects! < full.projects!);
  assert.ok(published.chapters! < full.chapters!);
  assert.match(status.stderr, /inactive chapters, committees and projects/);
  assert.ok(Number.isNaN(published.leaders), 'leaders have no list of their own');
  // The same numbers as JSON.
  const json = JSON.parse((await runCli(['status', '--json'], env)).stdout) as ResourceCount[];
  const chapters = json.find((c) => c.resource === 'chapters')!;
  assert.deepEqual([chapters.stored, chapters.published], [full.chapters, published.chapters]);
  assert.equal(json.find((c) => c.resource === 'leaders')!.published, null);

  const again = await runCli(['import'], env);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).changed, false);
  assert.match(again.stderr, /nothing changed/);
});

test('importing from a folder with a malformed file exits 1 naming the file', async () => {
  const bad = path.join(tmp, 'bad');
  await fs.cp(path.join(ROOT, 'data'), bad, { recursive: true });
  await fs.writeFile(path.join(bad, 'owasp', 'chapters.json'), '[{"name": "broken"');
  const result = await runCli(['import', '--from', bad], env);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /chapters\.json/);
});

test(
  '`--help` after every command prints its usage and nothing else, exit 0: `serve --help` starts no server',
  // A server started by mistake would never exit: the timeout makes that a failure.
  { timeout: 60_000 },
  async () => {
    const commands = [...USAGE.matchAll(/^ {2}([a-z]+)(?: [a-z]+)?\b/gm)].map((m) => m[1]!);
    assert.ok(commands.includes('serve') && commands.includes('keys') && commands.length >= 8, commands.join(' '));
    for (const command of new Set(commands)) {
      for (const flag of ['--help', '-h']) {
        // serve is the process's own (main.ts); the others run in this process as main.ts runs them.
        const result =
          command === 'serve' ? await runCliProcess([command, flag], env) : await runCli([command, flag], env);
        assert.equal(result.code, 0, `${command} ${flag}: ${result.stderr}`);
        assert.match(result.stdout, new RegExp(`^Usage: cds ${command} `), `${command} ${flag}`);
        assert.equal(result.stderr, '', `${command} ${flag}`);
      }
    }
  },
);
