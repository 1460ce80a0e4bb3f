// cds webhooks: the operator's way to create, list, delete and replay webhooks (the GraphQL rules, webhooks.service.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, pgliteDir, type Db } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { createTestDb, EMBEDDED, seedDataDir, type TestDatabase } from './helpers.ts';
import { runCli as runCliOn } from './process.ts';
import type { Database } from '../src/db/index.ts';

let tmp: string;
let database: TestDatabase | undefined;
let env: Record<string, string | undefined>;
/** The one open database of the file, for the commands and the checks (as in test/keys-cli.test.ts, which says why). */
let open: Database;

const runCli = (args: string[], vars: Record<string, string | undefined>) => runCliOn(args, vars, { database: open });
const withDb = <T>(work: (db: Db) => Promise<T>): Promise<T> => work(open.db);

const count = () =>
  withDb(
    async (db) =>
      (await db.selectFrom('webhooks').select(db.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n,
  );

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-webhooks-'));
  if (process.env.DATABASE_URL) database = await createTestDb();
  env = {
    DATA_DIR: tmp,
    DATABASE_URL: database?.url,
    WEBHOOK_SECRETS_KEY: 'cli-test-webhook-secrets-key-0123456789',
    WEBHOOKS_PER_USER: '2',
  };
  await seedDataDir(tmp);
  open = database ?? (await openDatabase({ ...EMBEDDED, dataDir: pgliteDir(tmp) }));
  await withDb(async (db) => {
    await migrateToLatest(db);
    await upsertLocalUser(db, 'hook-operator');
  });
});
after(async () => {
  if (!database) await open?.close();
  await database?.drop();
  await fs.rm(tmp, { recursive: true, force: true });
});

test('create prints the id and the secret once (--json too); list shows the webhook; delete removes it', async () => {
  const created = await runCli(
    [
      'webhooks',
      'create',
      'hook-operator',
      'https://93.184.215.14/in',
      '--resource',
      'events',
      '--type',
      'event.created',
    ],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const [, id] = /^id\s+(\S+)$/m.exec(created.stdout)!;
  const [, secret] = /^secret\s+(whsec_\S+)$/m.exec(created.stdout)!;
  assert.match(id!, /^[0-9a-f-]{36}$/);
  assert.ok(!created.stderr.includes(secret!), 'the secret goes to stdout only');

  const json = await runCli(['webhooks', 'create', 'hook-operator', 'https://93.184.215.14/two', '--json'], env);
  assert.equal(json.code, 0, json.stderr);
  const body = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.match(String(body.id), /^[0-9a-f-]{36}$/);
  assert.match(String(body.secret), /^whsec_/);
  assert.deepEqual([body.owner, body.url, body.state], ['hook-operator', 'https://93.184.215.14/two', 'active']);

  const third = await runCli(['webhooks', 'create', 'hook-operator', 'https://93.184.215.14/three'], env);
  assert.equal(third.code, 1);
  assert.match(third.stderr, /WEBHOOK_LIMIT_REACHED: You can have at most 2 webhooks/);

  const listed = await runCli(['webhooks', 'list'], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^ID\s+OWNER\s+STATE\s+DELIVERED THROUGH\s+URL$/m);
  assert.match(
    listed.stdout,
    new RegExp(`^${id}\\s+hook-operator\\s+active\\s+\\d+\\s+https://93\\.184\\.215\\.14/in$`, 'm'),
  );
  assert.ok(!listed.stdout.includes('whsec_'));

  const replay = await runCli(['webhooks', 'replay', id!, '--after', '0'], env);
  assert.equal(replay.code, 0, replay.stderr);
  const deleted = await runCli(['webhooks', 'delete', id!], env);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(await count(), '1');
  const again = await runCli(['webhooks', 'delete', id!], env);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /WEBHOOK_NOT_FOUND/);
  await runCli(['webhooks', 'delete', String(body.id)], env);
});

test('refusals are clear errors that create nothing', async () => {
  for (const [args, message, code] of [
    [['https://localhost/'], /localhost is or resolves to/, 1],
    [['http://93.184.215.14/'], /must use https/, 1],
    [['https://10.0.0.1/'], /10\.0\.0\.1, a loopback, private/, 1],
    [['https://93.184.215.14/', '--resource', 'recipes'], /Unknown resource "recipes"/, 1],
    [['https://93.184.215.14/', '--type', 'chapter.renamed'], /Unknown type "chapter.renamed"/, 1],
  ] as const) {
    const result = await runCli(['webhooks', 'create', 'hook-operator', ...args], env);
    assert.equal(result.code, code, result.stderr);
    assert.match(result.stderr, message);
    assert.equal(result.stdout, '');
  }
  const nobody = await runCli(['webhooks', 'create', 'nobody-here', 'https://93.184.215.14/'], env);
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /no user with login "nobody-here"/);
  const usage = await runCli(['webhooks', 'replay', 'x', '--after', 'ten'], env);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--after must be a change id/);
  assert.equal(await count(), '0');
});

test('without WEBHOOK_SECRETS_KEY: the embedded database keeps a key of its own in the data folder; a server needs one', async () => {
  const keyless = { ...env, WEBHOOK_SECRETS_KEY: undefined, WEBHOOKS_PER_USER: '5' };
  const create = () =>
    runCli(['webhooks', 'create', 'hook-operator', 'https://93.184.215.14/keyless', '--json'], keyless);
  const first = await create();
  if (database) {
    // Several instances share a PostgreSQL server: they must share the key, so it is a setting there.
    assert.equal(first.code, 1);
    assert.match(first.stderr, /WEBHOOK_SECRETS_KEY/);
    assert.equal(await count(), '0');
    return;
  }
  assert.equal(first.code, 0, first.stderr);
  assert.match((JSON.parse(first.stdout) as { secret: string }).secret, /^whsec_/);
  const file = path.join(tmp, 'webhook-secrets.key');
  const key = await fs.readFile(file, 'utf8');
  assert.match(key.trim(), /^[A-Za-z0-9+/=]{44}$/);
  assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
  // The next command (another process would be the same) keeps the key: the secrets sealed with it stay usable.
  const second = await create();
  assert.equal(second.code, 0, second.stderr);
  assert.equal(await fs.readFile(file, 'utf8'), key);
  const listed = await runCli(['webhooks', 'list', '--json'], keyless);
  assert.equal(listed.code, 0, listed.stderr);
  for (const id of (JSON.parse(listed.stdout) as { id: string }[]).map((hook) => hook.id))
    assert.equal((await runCli(['webhooks', 'delete', id], keyless)).code, 0);
});
