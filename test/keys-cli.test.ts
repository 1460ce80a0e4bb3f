// cds keys: the operator's way to create, list and revoke keys.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, pgliteDir } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { authenticateApiKey } from '../src/api-keys/api-keys.service.ts';
import { revokePublishedKeys } from '../src/api-keys/leaks.ts';
import pino from 'pino';
import { createTestDb, EMBEDDED, seedDataDir, type TestDatabase } from './helpers.ts';
import { runCli as runCliOn } from './process.ts';
import type { Database, Db } from '../src/db/index.ts';

let tmp: string;
let database: TestDatabase | undefined;
let env: Record<string, string | undefined>;
/**
 * The one open database of the file: the commands run on it (as on the admin channel, CliOptions.database) and the
 * checks read it. Each command opening the data folder again cost ~0.4 s of CPU on the embedded database; how a
 * command opens and closes its own is tested with processes (test/cli.test.ts, test/admin-channel.test.ts).
 */
let open: Database;

const runCli = (args: string[], vars: Record<string, string | undefined>) => runCliOn(args, vars, { database: open });
const withDb = <T>(work: (db: Db) => Promise<T>): Promise<T> => work(open.db);

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-keys-'));
  if (process.env.DATABASE_URL) database = await createTestDb();
  env = { DATA_DIR: tmp, DATABASE_URL: database?.url };
  await seedDataDir(tmp);
  open = database ?? (await openDatabase({ ...EMBEDDED, dataDir: pgliteDir(tmp) }));
  await withDb(async (db) => {
    await migrateToLatest(db);
    await upsertLocalUser(db, 'operator-user');
    await upsertLocalUser(db, 'chain-operator');
  });
});
after(async () => {
  if (!database) await open?.close();
  await database?.drop();
  await fs.rm(tmp, { recursive: true, force: true });
});

test('create prints the raw key once; list shows it active; revoke makes it revoked', async () => {
  const created = await runCli(
    ['keys', 'create', '--user', 'operator-user', '--name', 'ci', '--expires-in', '30'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const raw = created.stdout.trim();
  assert.match(raw, /^cds_[A-Za-z0-9_-]{49}$/);
  assert.ok(!created.stderr.includes(raw));
  assert.ok(await withDb((db) => authenticateApiKey(db, raw)));

  const listed = await runCli(['keys', 'list', '--user', 'operator-user'], env);
  assert.equal(listed.code, 0, listed.stderr);
  const [header, row] = listed.stdout.trim().split('\n');
  assert.match(header!, /^UUID\s+STATE\s+EXPIRES\s+LAST USED\s+NAME$/);
  const [uuid, state, , , name] = row!.split(/\s{2,}/);
  assert.equal(state, 'active');
  assert.equal(name, 'ci');
  assert.ok(!listed.stdout.includes(raw));

  const revoked = await runCli(['keys', 'revoke', uuid!], env);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match((await runCli(['keys', 'list', '--user', 'operator-user'], env)).stdout, /\srevoked\s/);
  assert.equal(await withDb((db) => authenticateApiKey(db, raw)), null);
});

test('failures exit 1, usage errors exit 2', async () => {
  assert.equal((await runCli(['keys', 'create', '--user', 'nobody', '--name', 'x', '--expires-in', '5'], env)).code, 1);
  assert.equal((await runCli(['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], env)).code, 1);
  assert.equal(
    (await runCli(['keys', 'create', '--user', 'operator-user', '--name', '   ', '--expires-in', '5'], env)).code,
    2,
  );
  assert.equal(
    (await runCli(['keys', 'create', '--user', 'operator-user', '--name', 'x', '--expires-in', 'soon'], env)).code,
    2,
  );
  assert.equal((await runCli(['keys', 'revoke', 'not-a-uuid'], env)).code, 2);
  assert.equal((await runCli(['keys', 'frob'], env)).code, 2);
});

async function createByCli(name: string, login = 'operator-user') {
  const created = await runCli(['keys', 'create', '--user', login, '--name', name, '--expires-in', '30'], env);
  assert.equal(created.code, 0, created.stderr);
  const raw = created.stdout.trim();
  const uuid = /created key ([0-9a-f-]{36})/.exec(created.stderr)![1]!;
  return { raw, uuid };
}

test('rotate prints the new key once; the old one works for the grace period (0: revoked at once)', async () => {
  const old = await createByCli('rotated at once');
  const rotated = await runCli(['keys', 'rotate', old.uuid, '--grace-hours', '0'], env);
  assert.equal(rotated.code, 0, rotated.stderr);
  const raw = rotated.stdout.trim();
  assert.match(raw, /^cds_[A-Za-z0-9_-]{49}$/);
  assert.ok(!rotated.stderr.includes(raw), 'the new key only on stdout');
  assert.match(rotated.stderr, /rotated .* "rotated at once".*the old key is revoked/);
  assert.equal(await withDb((db) => authenticateApiKey(db, old.raw)), null);
  assert.ok(await withDb((db) => authenticateApiKey(db, raw)));
  assert.equal((await runCli(['keys', 'rotate', old.uuid, '--grace-hours', '1'], env)).code, 1, 'already rotated');

  const graceful = await createByCli('rotated with grace');
  const later = await runCli(['keys', 'rotate', graceful.uuid, '--grace-hours', '24'], env);
  assert.equal(later.code, 0, later.stderr);
  assert.match(later.stderr, /the old key works for 24 more hour\(s\)/);
  const identity = await withDb((db) => authenticateApiKey(db, graceful.raw));
  assert.ok(identity, 'the old key during its grace period');
  assert.ok(identity.expiresAt.getTime() <= Date.now() + 24 * 3_600_000);
  assert.equal(
    await withDb((db) => authenticateApiKey(db, graceful.raw, undefined, new Date(Date.now() + 25 * 3_600_000))),
    null,
    'not after it',
  );

  const states = new Map(
    (await runCli(['keys', 'list', '--user', 'operator-user'], env)).stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((row) => row.split(/\s{2,}/))
      .map(([uuid, state]) => [uuid, state]),
  );
  assert.equal(states.get(old.uuid), 'rotated', 'list: rotated with no grace');
  assert.equal(states.get(graceful.uuid), 'rotated, in grace', 'list: rotated, still working');

  assert.equal((await runCli(['keys', 'rotate', graceful.uuid, '--grace-hours', '169'], env)).code, 2);
  assert.equal((await runCli(['keys', 'rotate', graceful.uuid], env)).code, 2, '--grace-hours is required');
  assert.equal((await runCli(['keys', 'rotate', 'not-a-uuid', '--grace-hours', '1'], env)).code, 2);
  assert.equal(
    (await runCli(['keys', 'rotate', '00000000-0000-4000-8000-000000000000', '--grace-hours', '1'], env)).code,
    1,
  );
});

test('rotating the new key again during the grace period revokes the one before: one key in grace per chain', async () => {
  const chain = [await createByCli('chained', 'chain-operator')];
  const told: string[] = [];
  for (let i = 0; i < 2; i++) {
    const rotated = await runCli(['keys', 'rotate', chain.at(-1)!.uuid, '--grace-hours', '24'], env);
    assert.equal(rotated.code, 0, rotated.stderr);
    chain.push({ raw: rotated.stdout.trim(), uuid: /to ([0-9a-f-]{36})/.exec(rotated.stderr)![1]! });
    told.push(rotated.stderr);
  }
  // The newest key and the one it replaced (in grace) work; the older ones stopped. (Each check opens the embedded
  // database, a second each: checked once, at the end.)
  const valid = await withDb((db) => Promise.all(chain.map((key) => authenticateApiKey(db, key.raw))));
  assert.deepEqual(
    valid.map((identity) => identity !== null),
    [false, true, true],
  );
  assert.doesNotMatch(told[0]!, /the key it had replaced/);
  assert.match(told[1]!, new RegExp(`the key it had replaced, ${chain[0]!.uuid}, is revoked`));
  const listed = (await runCli(['keys', 'list', '--user', 'chain-operator'], env)).stdout;
  const states = chain.map((key) => new RegExp(`${key.uuid}\\s+([a-z, ]+?)\\s{2}`).exec(listed)?.[1]);
  assert.deepEqual(states, ['rotated', 'rotated, in grace', 'active']);
});

test('list says which key was revoked because GitHub reported it published', async () => {
  await withDb((db) => upsertLocalUser(db, 'leaky-user'));
  const created = await runCli(
    ['keys', 'create', '--user', 'leaky-user', '--name', 'pushed', '--expires-in', '30'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const uuid = /created key ([0-9a-f-]{36})/.exec(created.stderr)![1]!;
  const quiet = { revocation: async () => {}, dataChanged: async () => {} };
  const report = [
    { token: created.stdout.trim(), type: 'cds_api_key', url: 'https://example.test/x', source: 'content' },
  ];
  await withDb((db) => revokePublishedKeys(db, report, quiet, pino({ level: 'silent' }), new Date()));
  const listed = (await runCli(['keys', 'list', '--user', 'leaky-user'], env)).stdout;
  assert.match(listed, new RegExp(`${uuid}\\s+revoked \\(leaked\\)\\s`));
});

test('create without --expires-in: a key of 30 days, as users create --key; the help says so (issue 45)', async () => {
  assert.equal((await runCli(['users', 'create', 'default-operator'], env)).code, 0);
  const created = await runCli(['keys', 'create', '--user', 'default-operator', '--name', 'default-expiry'], env);
  assert.equal(created.code, 0, created.stderr);
  const expires = new Date(/expires (\S+);/.exec(created.stderr)![1]!).getTime();
  assert.ok(Math.abs(expires - (Date.now() + 30 * 86_400_000)) < 60_000, created.stderr);
  const help = await runCli(['keys', 'create', '--help'], env);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /keys create --user LOGIN --name NAME \[--expires-in DAYS\]/);
  assert.match(help.stdout, /default 30 days/);
});

test('keys rotate --help shows rotate alone; keys --help the whole block (issue 45)', async () => {
  const rotate = await runCli(['keys', 'rotate', '--help'], env);
  assert.equal(rotate.code, 0);
  assert.match(rotate.stdout, /^Usage: cds keys rotate …/);
  assert.match(rotate.stdout, /keys rotate UUID --grace-hours N/);
  assert.doesNotMatch(rotate.stdout, /keys (create|list|revoke)/);
  const keys = await runCli(['keys', '--help'], env);
  for (const sub of ['create', 'list', 'revoke', 'rotate']) assert.match(keys.stdout, new RegExp(`keys ${sub}`));
  const sync = await runCli(['sync', 'owasp', '--help'], env);
  assert.match(sync.stdout, /sync owasp/);
  assert.match(sync.stdout, /sync … --json\|--text/);
  assert.doesNotMatch(sync.stdout, /sync github/);
});

test('a rotated key revoked during its grace period is listed as revoked; one whose grace ended as rotated (issue 45)', async () => {
  const login = 'grace-operator';
  assert.equal((await runCli(['users', 'create', login], env)).code, 0);
  const revokedInGrace = await createByCli('revoked in grace', login);
  const rotated = await runCli(['keys', 'rotate', revokedInGrace.uuid, '--grace-hours', '24'], env);
  assert.equal(rotated.code, 0, rotated.stderr);
  assert.equal((await runCli(['keys', 'revoke', revokedInGrace.uuid], env)).code, 0);
  const atOnce = await createByCli('rotated at once', login);
  assert.equal((await runCli(['keys', 'rotate', atOnce.uuid, '--grace-hours', '0'], env)).code, 0);
  const states = new Map(
    (await runCli(['keys', 'list', '--user', login], env)).stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((row) => row.split(/\s{2,}/))
      .map(([uuid, state]) => [uuid, state]),
  );
  assert.equal(states.get(revokedInGrace.uuid), 'revoked');
  assert.equal(states.get(atOnce.uuid), 'rotated');
  assert.equal(await withDb((db) => authenticateApiKey(db, revokedInGrace.raw)), null);
});
