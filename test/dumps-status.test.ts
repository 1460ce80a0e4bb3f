// Dumps that are there or say why (issue 45, item 5), on the engine of the run: while the folder holds none of this
// database's dumps the manifest says `building` with Retry-After; the server's background build (as server.ts starts
// it, with its default timing) writes them at once, not a minute after start, and the manifest says `ready`; an
// instance without a folder (a PostgreSQL server without DUMPS_DIR) says `disabled` and names the setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp } from './app.ts';
import { serverUrl } from './helpers.ts';
import { startDumpBuilds } from '../src/dumps/dumps.background.ts';
import { DUMPS } from '../src/api/v0/resources.ts';

test('no dumps yet: `building` with Retry-After; the background build starts at once; then `ready`', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-dumps-status-'));
  const t = await buildTestApp({ env: { DUMPS_DIR: dir } });
  try {
    const waiting = await t.app.inject({ method: 'GET', url: '/api/v0/dumps/' });
    assert.equal(waiting.statusCode, 200);
    assert.equal(waiting.headers['retry-after'], '5');
    assert.equal(waiting.json().status, 'building');
    assert.deepEqual(waiting.json().items, []);

    const started = Date.now();
    const built = new Promise<void>((resolve, reject) => {
      const builds = startDumpBuilds({
        database: t.database,
        dir,
        dumps: DUMPS,
        watcher: t.app.shared.watcher,
        log: {
          info: (_object, message) => {
            if (message === 'dumps built') void builds.stop().then(resolve, reject);
          },
          warn: (object) => reject(new Error(JSON.stringify(object))),
        },
      });
    });
    await built;
    // The default timing (server.ts passes none): a build at once, not after a minute's wait.
    assert.ok(Date.now() - started < 30_000, `built ${Date.now() - started} ms after start`);

    const ready = await t.app.inject({ method: 'GET', url: '/api/v0/dumps/' });
    assert.equal(ready.headers['retry-after'], undefined);
    const body = ready.json() as { status: string; message?: string; items: { resource: string }[] };
    assert.equal(body.status, 'ready');
    assert.equal(body.message, undefined);
    assert.deepEqual(
      body.items.map((item) => item.resource),
      DUMPS.map((dump) => dump.resource),
    );
  } finally {
    await t.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('where dumps come from by default: the embedded database’s data folder; a PostgreSQL server: `disabled`, naming DUMPS_DIR', async () => {
  if (!serverUrl) {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-dumps-default-'));
    const t = await buildTestApp({ env: { DATA_DIR: dataDir } });
    try {
      assert.equal(t.config.dumpsDir, path.join(dataDir, 'dumps'));
      const res = await t.app.inject({ method: 'GET', url: '/api/v0/dumps/' });
      assert.equal(res.json().status, 'building');
    } finally {
      await t.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
    return;
  }
  const t = await buildTestApp({ env: { DATABASE_URL: serverUrl } });
  try {
    assert.equal(t.config.dumpsDir, undefined);
    const res = await t.app.inject({ method: 'GET', url: '/api/v0/dumps/' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['retry-after'], undefined);
    assert.deepEqual(res.json(), {
      status: 'disabled',
      setting: 'DUMPS_DIR',
      message: 'This instance builds no dumps: its operator sets DUMPS_DIR (a folder) to have them.',
      last_change_id: 0,
      items: [],
    });
    const file = await t.app.inject({ method: 'GET', url: '/api/v0/dumps/chapters.ndjson.gz' });
    assert.equal(file.statusCode, 404);
  } finally {
    await t.close();
  }
});
