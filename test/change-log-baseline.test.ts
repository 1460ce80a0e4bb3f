// The change log's baseline (issue 43, item 1; docs/changes.md): `cds import --from-dumps` fills an empty database
// and records no change (the dumps are the baseline); its first change is the first write after them. The first
// import of the bundled data records none either (test/change-log.test.ts starts from it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { changesAfter, fullRead } from './changes.ts';
import { createTestDb, EMBEDDED, seedDataDir, serverUrl, type TestDatabase } from './helpers.ts';
import { runCli } from './process.ts';
import { openDatabase, pgliteDir, type Database } from '../src/db/index.ts';
import { readDataVersion } from '../src/announcements/counters.queries.ts';

let source: TestApp;
let base: string;
const temps: string[] = [];
before(async () => {
  const dumps = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-baseline-dumps-'));
  temps.push(dumps);
  source = await buildTestApp({ importBundled: true, env: { DUMPS_DIR: dumps } });
  // A change after the first import: the dumps' last_change_id is then not 0.
  await sql`UPDATE chapters SET name = name || ' (renamed)' WHERE key = 'london'`.execute(source.database.db);
  await source.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(source.app.server.address() as AddressInfo).port}`;
});
after(async () => {
  await source?.close();
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

/** An empty, migrated database for `cds`: a test database of the server, or a data folder of the embedded one. */
async function emptyTarget(): Promise<{
  env: Record<string, string>;
  open(): Promise<Database>;
  drop(): Promise<void>;
}> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-baseline-target-'));
  temps.push(dataDir);
  if (serverUrl) {
    const database: TestDatabase = await createTestDb();
    return {
      env: { DATA_DIR: dataDir, DATABASE_URL: database.url! },
      open: () => Promise.resolve({ ...database, close: () => Promise.resolve() }),
      drop: () => database.drop(),
    };
  }
  await seedDataDir(dataDir, 'migrated');
  return {
    env: { DATA_DIR: dataDir },
    open: () => openDatabase({ ...EMBEDDED, dataDir: pgliteDir(dataDir) }),
    drop: async () => {},
  };
}

test('cds import --from-dumps records no change: the copy starts at the source dumps, then follows the changes after them', async () => {
  const read = await fullRead(source);
  const last = (await changesAfter(source.database.db)).at(-1)!;
  assert.equal(read.lastChangeId, last.id, 'the manifest names the last change the dumps include');
  assert.equal(last.key, 'london');

  const target = await emptyTarget();
  try {
    const imported = await runCli(['import', '--from-dumps', base, '--json'], target.env);
    assert.equal(imported.code, 0, imported.stderr);
    const database = await target.open();
    try {
      assert.ok((await readDataVersion(database.db)) > 0, 'loaded');
      assert.deepEqual(await changesAfter(database.db), [], 'no change recorded');
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM chapters`.execute(database.db);
      assert.ok(rows[0]!.n > 300);
      // Its first change is the first write after the copy.
      await sql`UPDATE chapters SET name = 'Manchester' WHERE key = 'london'`.execute(database.db);
      assert.deepEqual(
        (await changesAfter(database.db)).map((c) => [c.type, c.key, c.changed_fields]),
        [['chapter.updated', 'london', ['name']]],
      );
    } finally {
      await database.close();
    }
  } finally {
    await target.drop();
  }
});
