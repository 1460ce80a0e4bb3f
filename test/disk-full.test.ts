// Test tier: system (starts the server as a process on a full disk): `npm run test:system`, CI.
// A full disk is an outage, not a bug (issue 25): a statement that fails with SQLSTATE 53100 (disk_full) is answered
// 503 with our body by REST and by GraphQL, never "Internal server error", and the service answers again as soon as
// the statements succeed; an embedded database that cannot start on a full disk says so. The database raises the
// real error (a function of the test's, in the pass's engine) where a write or a read would need more disk.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { chapter } from './factories.ts';
import { run, SERVER_ARGS } from './process.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp({ env: { AUTH_DEV_LOGIN: 'true', RESPONSE_CACHE: 'false' }, captureLogs: true });
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
  await sql`
    create function cds_test_disk_full() returns trigger language plpgsql as $$
    begin
      raise exception 'could not extend file "base/1/2": No space left on device' using errcode = 'disk_full';
    end $$`.execute(t.database.db);
  await sql`
    create function cds_test_disk_full_read() returns boolean language plpgsql volatile as $$
    begin
      raise exception 'could not write to file "base/pgsql_tmp/t": No space left on device' using errcode = 'disk_full';
    end $$`.execute(t.database.db);
});
after(async () => {
  await sql`drop function if exists cds_test_disk_full() cascade`.execute(t.database.db);
  await sql`drop function if exists cds_test_disk_full_read() cascade`.execute(t.database.db);
  await t.close();
});

test('a write on a full disk: GraphQL answers 503 with an error id, not "Internal server error"; then recovers', async () => {
  const browser = await devSignIn(t, 'full');
  await sql`create trigger cds_test_full before insert on api_keys for each row execute function cds_test_disk_full()`.execute(
    t.database.db,
  );
  try {
    const res = await graphql(t, browser, DOC.createApiKey, { name: 'full', expiresAt: inDays(3) });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '5');
    const [error] = res.json().errors as { message: string; extensions: { code: string; errorId: string } }[];
    assert.match(error!.message, /^Service unavailable \(error id [0-9a-f-]{36}\)$/);
    assert.equal(error!.extensions.code, 'SERVICE_UNAVAILABLE');
    assert.doesNotMatch(res.body, /No space|base\/1/);
    const logged = t
      .logs()
      .split('\n')
      .find((line) => line.includes(`"errorId":"${error!.extensions.errorId}"`));
    assert.match(logged ?? '', /"level":40/, 'logged as a warning (an outage), not an error (a bug)');
  } finally {
    await sql`drop trigger cds_test_full on api_keys`.execute(t.database.db);
  }
  const again = await graphql(t, browser, DOC.createApiKey, { name: 'full', expiresAt: inDays(3) });
  assert.equal(again.statusCode, 200, again.body);
  assert.equal(again.json().data.createApiKey.ok, true);
});

test('a read on a full disk: REST answers 503 with our body and Retry-After; then recovers', async () => {
  await sql`alter table chapters rename to cds_test_chapters`.execute(t.database.db);
  await sql`create view chapters as select * from cds_test_chapters where cds_test_disk_full_read()`.execute(
    t.database.db,
  );
  try {
    for (const url of ['/api/v0/chapters/', '/api/v0/chapters/london']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 503, `${url}: ${res.body}`);
      assert.deepEqual(res.json(), { message: 'Service unavailable', error_id: res.headers['x-request-id'] });
      assert.equal(res.headers['retry-after'], '5');
    }
  } finally {
    await sql`drop view chapters`.execute(t.database.db);
    await sql`alter table cds_test_chapters rename to chapters`.execute(t.database.db);
  }
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v0/chapters/london' })).statusCode, 200);
});

const root = process.getuid?.() === 0;
test(
  'the first start of the embedded database on a full disk stops with a message that says so',
  { skip: root ? false : 'needs root, to mount a small tmpfs as the full disk' },
  async () => {
    const mount = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-full-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mount]);
    try {
      const result = await run(process.execPath, [...SERVER_ARGS], { DATA_DIR: path.join(mount, 'data'), PORT: '0' });
      assert.equal(result.code, 1, result.stderr);
      assert.doesNotMatch(result.stderr, /\[object Object\]/);
      assert.match(
        result.stderr,
        /^cannot open the database: .*the disk of DATA_DIR \(.*\) is full or nearly \(\d+ kB free\): free some space or set DATA_DIR to a folder on another disk$/m,
      );
    } finally {
      execFileSync('umount', [mount]);
      await fs.rm(mount, { recursive: true, force: true });
    }
  },
);
