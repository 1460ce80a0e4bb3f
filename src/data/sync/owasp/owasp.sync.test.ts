// The website data sync, from a folder and from a URL served by a local static stand-in: a removed
// chapter becomes inactive, a renamed one is updated (and placed again), a bad file changes nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createTestDb, type TestDatabase } from '../../../../test/helpers.ts';
import type { Db } from '../../../db/index.ts';
import { ImportError } from '../../base/import-error.ts';
import { distanceKm } from '../../geocode/geocode.gazetteer.ts';
import { BUNDLED_DATA_DIR } from '../../import/dataset.import.ts';
import { readDataVersion } from '../../../announcements/counters.queries.ts';
import { OWASP_FILES } from './owasp.download.ts';
import { syncOwasp } from './owasp.sync.ts';

type Json = Record<string, unknown>;
const MANCHESTER = { latitude: 53.48, longitude: -2.24 };
const LISBON = { latitude: 38.72, longitude: -9.14 };

const temps: string[] = [];
after(() => Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true }))));

async function copyOfBundledFiles(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'owasp-sync-'));
  temps.push(dir);
  for (const file of OWASP_FILES) await fs.copyFile(path.join(BUNDLED_DATA_DIR, 'owasp', file), path.join(dir, file));
  return dir;
}

/** Upstream edits: Curitiba leaves, London is renamed Manchester, an event in Lisbon is announced. */
async function editUpstream(dir: string): Promise<void> {
  const file = path.join(dir, 'chapters.json');
  const chapters = (JSON.parse(await fs.readFile(file, 'utf8')) as Json[])
    .filter((c) => !String(c.url).includes('www-chapter-curitiba/'))
    .map((c) =>
      String(c.url).includes('www-chapter-london/') ? { ...c, name: 'Manchester', title: 'OWASP Manchester' } : c,
    );
  await fs.writeFile(file, JSON.stringify(chapters));
  const events = await fs.readFile(path.join(dir, 'events.yml'), 'utf8');
  const added =
    '    - name: OWASP Sync Days 2030 - Lisbon, Portugal\n      start-date: 2030-05-02\n      dates: May 2-3, 2030\n';
  await fs.writeFile(path.join(dir, 'events.yml'), events.replace(/(\n {2}events:\n)/, `$1${added}`));
}

async function chapter(db: Db, key: string) {
  return db
    .selectFrom('chapters')
    .select(['name', 'is_active', 'latitude', 'longitude'])
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
}

async function snapshot(db: Db): Promise<string> {
  const tables = [
    'chapters',
    'committees',
    'projects',
    'events',
    'sponsors',
    'leaders',
    'entity_leaders',
    'sync_requests',
  ];
  const rows = await Promise.all(
    tables.map((t) =>
      sql
        .raw(`SELECT * FROM ${t} ORDER BY 1`)
        .execute(db)
        .then((r) => r.rows),
    ),
  );
  return JSON.stringify([rows, await readDataVersion(db)]);
}

async function checkEdited(db: Db, londonBefore: { latitude: number | null; longitude: number | null }): Promise<void> {
  assert.equal((await chapter(db, 'curitiba')).is_active, false, 'removed upstream: kept, inactive');
  const london = await chapter(db, 'london');
  assert.equal(london.name, 'OWASP Manchester');
  assert.ok(
    distanceKm(london as { latitude: number; longitude: number }, MANCHESTER) < 30,
    'placed again from the new name',
  );
  assert.ok(
    distanceKm(
      london as { latitude: number; longitude: number },
      londonBefore as { latitude: number; longitude: number },
    ) > 200,
  );
  const event = await db
    .selectFrom('events')
    .select(['latitude', 'longitude'])
    .where('key', 'like', '%sync-days-2030%')
    .executeTakeFirstOrThrow();
  assert.ok(distanceKm(event as { latitude: number; longitude: number }, LISBON) < 30, 'a new event is placed');
}

describe('from a folder', () => {
  let database: TestDatabase;
  let dir: string;
  before(async () => {
    database = await createTestDb();
    dir = await copyOfBundledFiles();
  });
  after(() => database.drop());

  it('loads, then applies removals and renames, then changes nothing', async () => {
    const first = await syncOwasp(database.db, { from: dir });
    assert.equal(first.owasp?.counts.chapters.inserted, 608);
    const london = await chapter(database.db, 'london');
    await editUpstream(dir);
    const second = await syncOwasp(database.db, { from: dir });
    assert.equal(second.changed, true);
    assert.deepEqual(second.owasp?.counts.chapters, { total: 607, inserted: 0, updated: 1, deactivated: 1 });
    assert.equal(second.owasp?.counts.events.inserted, 1);
    assert.equal(second.dataVersion, first.dataVersion + 1);
    await checkEdited(database.db, london);
    const third = await syncOwasp(database.db, { from: dir });
    assert.equal(third.changed, false);
    assert.equal(third.dataVersion, second.dataVersion);
  });

  it('refuses a malformed file, naming it, and leaves the database as it was', async () => {
    const before = await snapshot(database.db);
    await fs.writeFile(path.join(dir, 'projects.json'), '[{"url": "https://owasp.org/www-project-x/", ');
    await assert.rejects(
      syncOwasp(database.db, { from: dir }),
      (e: unknown) => e instanceof ImportError && /^projects\.json: invalid JSON/.test(e.message),
    );
    assert.equal(await snapshot(database.db), before);
  });
});

describe('from a URL', () => {
  let database: TestDatabase;
  let dir: string;
  let server: http.Server;
  let base: string;
  const served: { path: string; status: number }[] = [];
  const broken = new Map<string, 'error' | 'hang'>();
  before(async () => {
    database = await createTestDb();
    dir = await copyOfBundledFiles();
    server = http.createServer((req, res) => {
      (async () => {
        const file = path.basename(req.url ?? '');
        const answer = (status: number, body?: Buffer, headers: Record<string, string> = {}) => {
          served.push({ path: file, status });
          res.writeHead(status, headers).end(body);
        };
        if (broken.get(file) === 'hang') return void served.push({ path: file, status: 0 });
        if (broken.get(file) === 'error') return answer(500);
        const body = await fs.readFile(path.join(dir, file)).catch(() => undefined);
        if (!body) return answer(404);
        const etag = `"${crypto.createHash('sha1').update(body).digest('hex')}"`;
        if (req.headers['if-none-match'] === etag) return answer(304, undefined, { etag });
        answer(200, body, { etag, 'content-type': 'text/plain; charset=utf-8' });
      })().catch((error: unknown) => res.destroy(error as Error));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/_data/`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await database.drop();
  });

  it('downloads, then gets 304s and writes nothing, then picks up upstream edits', async () => {
    const first = await syncOwasp(database.db, { from: base });
    assert.ok(Object.values(first.files).every((status) => status === 'downloaded'));
    const london = await chapter(database.db, 'london');
    const second = await syncOwasp(database.db, { from: base });
    assert.deepEqual(new Set(Object.values(second.files)), new Set(['not modified']));
    assert.equal(second.owasp, null);
    assert.equal(second.dataVersion, first.dataVersion);
    await editUpstream(dir);
    const third = await syncOwasp(database.db, { from: base });
    assert.equal(third.files['chapters.json'], 'downloaded');
    assert.equal(third.files['leaders.json'], 'not modified');
    assert.deepEqual(third.owasp?.counts.chapters, { total: 607, inserted: 0, updated: 1, deactivated: 1 });
    await checkEdited(database.db, london);
  });

  it('a malformed, failing, oversized or silent file stops the sync, named, with the database unchanged', async () => {
    const before = await snapshot(database.db);
    const original = await fs.readFile(path.join(dir, 'leaders.json'));
    await fs.writeFile(path.join(dir, 'leaders.json'), '{"not": "a list"}');
    await assert.rejects(syncOwasp(database.db, { from: base }), /^ImportError: leaders\.json: must contain a list/);
    await fs.writeFile(path.join(dir, 'leaders.json'), original);
    broken.set('committees.json', 'error');
    await assert.rejects(
      syncOwasp(database.db, { from: base }),
      /committees\.json: download failed: HTTP 500 \(http:\/\/127/,
    );
    broken.set('committees.json', 'hang');
    await assert.rejects(
      syncOwasp(database.db, { from: base, timeoutMs: 300 }),
      /committees\.json: no complete answer within 300 ms/,
    );
    broken.clear();
    const chapters = path.join(dir, 'chapters.json');
    await fs.writeFile(chapters, JSON.stringify(JSON.parse(await fs.readFile(chapters, 'utf8')), null, 1));
    await assert.rejects(
      syncOwasp(database.db, { from: base, maxBytes: 100_000 }),
      /chapters\.json: larger than the 100000-byte limit/,
    );
    assert.equal(await snapshot(database.db), before);
    const fixed = await syncOwasp(database.db, { from: base });
    assert.equal(fixed.changed, false, 'the last good sync already stored these files');
  });
});
