// `cds sync` as an operator runs it: exit codes, the JSON report on stdout, one summary line on stderr.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDb, seedDataDir, serverUrl, type TestDatabase } from '../../../test/helpers.ts';
import {
  loadFixtureOrganizations,
  startGithubApiStandIn,
  type GithubApiStandIn,
} from '../../../test/github-api-standin.ts';
import { runCli } from '../../../test/process.ts';
import { BUNDLED_DATA_DIR } from '../import/dataset.import.ts';

let tmp: string;
let database: TestDatabase | undefined;
let standIn: GithubApiStandIn;
let env: Record<string, string | undefined>;

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-sync-cli-'));
  standIn = await startGithubApiStandIn(await loadFixtureOrganizations());
  // A migrated database, as `cds migrate` leaves it.
  if (serverUrl) database = await createTestDb();
  else await seedDataDir(path.join(tmp, 'data'));
  env = {
    DATA_DIR: path.join(tmp, 'data'),
    DATABASE_URL: database?.url,
    GITHUB_API_URL: standIn.url,
    GITHUB_TOKEN: 'cli-token',
    // The local stand-in needs no pacing (the gate's pacing is tested with a fake clock in github.gate.test.ts).
    SYNC_GITHUB_REQUESTS_PER_MINUTE: '0',
  };
});
after(async () => {
  await standIn.close();
  await database?.drop();
  await fs.rm(tmp, { recursive: true, force: true });
});

const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

test('sync github mirrors the organizations named, then finds nothing new', async () => {
  const first = await runCli(['sync', 'github', '--org', 'octokit-fixture-org', '--org', 'Octocoders'], env);
  assert.equal(first.code, 0, first.stderr);
  const report = JSON.parse(first.stdout) as {
    repositories: number;
    counts: { issues: { inserted: number } };
    profiles: { asked: number; fetched: number };
  };
  assert.equal(report.repositories, 8);
  assert.ok(
    report.profiles.fetched > 0 && report.profiles.asked >= report.profiles.fetched,
    JSON.stringify(report.profiles),
  );
  assert.equal(report.counts.issues.inserted, 16);
  assert.match(
    lastLine(first.stderr),
    /^GitHub sync: 2 organizations, 8 repositories; \d+ requests \(0 not modified\); .*issues 16 new.*; data version \d+; [\d.]+ s$/,
  );
  assert.doesNotMatch(first.stderr, /\r|█|░/, 'no progress bar when stderr is not a terminal');

  const second = await runCli(['sync', 'github', '--org', 'octokit-fixture-org', '--org', 'Octocoders'], env);
  assert.equal(second.code, 0, second.stderr);
  assert.match(lastLine(second.stderr), /\(\d+ not modified\); no record changed; data version unchanged;/);
});

test('sync owasp reads a folder; a bad source exits 1 naming the file', async () => {
  const ok = await runCli(['sync', 'owasp', '--from', path.join(BUNDLED_DATA_DIR, 'owasp')], env);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(lastLine(ok.stderr), /^OWASP website sync: files read from .*; chapters 608 new.*; data version \d+;/);
  const missing = await runCli(['sync', 'owasp', '--from', path.join(tmp, 'nowhere')], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^cds: chapters\.json: cannot be read/);
});

test('sync github prints its JSON report on every exit: budget spent, rate limit, unknown organization, database down', async () => {
  const json = (stdout: string) => JSON.parse(stdout) as { stopped?: string; requests?: { counted: number } };

  const budget = await runCli(['sync', 'github', '--org', 'codeforamerica', '--budget', '3'], env);
  assert.equal(budget.code, 1, budget.stderr);
  assert.match(json(budget.stdout).stopped ?? '', /budget of 3 counted requests is spent/);
  assert.equal(json(budget.stdout).requests?.counted, 3);

  standIn.fail('rate-limit', (p) => p.endsWith('/orgs/Octocoders'), { resetIn: 7200 });
  const limited = await runCli(['sync', 'github', '--org', 'Octocoders'], env);
  assert.equal(limited.code, 1, limited.stderr);
  assert.match(json(limited.stdout).stopped ?? '', /rate limit spent .* beyond the 900 s this run may wait/);
  assert.match(limited.stderr, /GitHub sync stopped after 0 of 1 organizations/);

  const unknown = await runCli(['sync', 'github', '--org', 'no-such-org'], env);
  assert.equal(unknown.code, 1);
  assert.match(json(unknown.stdout).stopped ?? '', /organization "no-such-org" not found/);

  const down = await runCli(['sync', 'github', '--org', 'Octocoders'], {
    ...env,
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
  });
  assert.equal(down.code, 1);
  assert.ok(json(down.stdout).stopped, down.stdout);
  assert.match(down.stderr, /^cds: /m);
});

test('usage errors exit 2', async () => {
  for (const args of [
    ['sync'],
    ['sync', 'gitlab'],
    ['sync', 'github'],
    ['sync', 'owasp', '--nope'],
    ['sync', 'github', '--org', 'x', '--budget', '0'],
  ]) {
    const result = await runCli(args, env);
    assert.equal(result.code, 2, args.join(' '));
    assert.match(result.stderr, /Usage: cds/);
  }
});
