// Test tier: system (starts the server as a process): `npm run test:system`, CI.
// DATABASE_URL naming a database the server does not have (the README's …/cds on a fresh PostgreSQL): created on
// start when the user may, else a one-line message saying what to run. Needs the PostgreSQL server of the
// DATABASE_URL pass; skipped on the embedded pass.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import pg from 'pg';
import { exited, freePort, runCli, startServer } from './process.ts';

const serverUrl = process.env.DATABASE_URL;
const skip = serverUrl ? false : 'needs DATABASE_URL (the PostgreSQL pass)';
const suffix = crypto.randomBytes(4).toString('hex');
const created: string[] = [];
const role = `cds_nocreate_${suffix}`;

function urlFor(database: string, user?: string): string {
  const url = new URL(serverUrl!);
  url.pathname = `/${encodeURIComponent(database)}`;
  if (user) url.username = user;
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const exists = (name: string) =>
  admin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);

after(async () => {
  if (!serverUrl) return;
  await admin(async (c) => {
    for (const name of created) await c.query(`DROP DATABASE IF EXISTS "${name.replaceAll('"', '""')}" WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS ${role}`);
  });
});

test('a missing database is created, even with a quote and a space in its name, and only once', { skip }, async () => {
  const name = `cds_create_${suffix}_a"b c`;
  created.push(name);
  const first = await runCli(['migrate'], { DATABASE_URL: urlFor(name) });
  assert.equal(first.code, 0, first.stderr);
  assert.ok(await exists(name));
  const second = await runCli(['migrate'], { DATABASE_URL: urlFor(name) });
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, /up to date/);
});

test(
  'a user who may not create it gets one line naming the command to run, from cds and from the server',
  { skip },
  async () => {
    await admin((c) => c.query(`CREATE ROLE ${role} LOGIN NOCREATEDB`));
    const name = `cds_missing_${suffix}`;
    created.push(name);
    const url = urlFor(name, role);

    const cli = await runCli(['migrate'], { DATABASE_URL: url });
    assert.equal(cli.code, 1);
    assert.match(
      cli.stderr,
      new RegExp(
        `the database "${name}" does not exist and ${role} may not create it; create it first: createdb -h 127\\.0\\.0\\.1 -p 5432 -U ${role} '${name}'`,
      ),
    );
    assert.doesNotMatch(cli.stderr, /\n\s+at |Migration \(unknown\)/, 'no stack, no migration error');

    const server = startServer({ DATABASE_URL: url, PORT: String(await freePort()) });
    assert.equal(await exited(server), 1);
    assert.match(
      server.output(),
      /cannot open the database: the database "cds_missing_\w+" does not exist and .* may not create it; create it first: createdb/,
    );
    assert.doesNotMatch(server.output(), /"stack"|Migration \(unknown\)/);
    assert.equal(await exists(name), false, 'nothing was created');
  },
);
