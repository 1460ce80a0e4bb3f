// The change log from real writers (issue 43, item 1): the OWASP sync from an edited copy of the website's files and
// the GitHub sync from the API stand-in. After each sync, the changes it recorded are exactly the difference between
// a full read before and one after (the dumps, each line the record's detail): one `created` per record that appeared,
// one `deleted` per record that went, one `updated` per record whose detail changed, naming exactly the fields that
// did; a mirror that loads the dumps and applies the changes after their `last_change_id` holds the full read; a sync
// that finds nothing new, and a write of fields the API does not show, record nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { applyChanges, checkReadBack, expectedChanges, feedAfter, fullRead, toldChanges } from './changes.ts';
import type { Change } from '../src/changes/change-log.ts';
import { readDataVersion } from '../src/announcements/counters.queries.ts';
import { BUNDLED_DATA_DIR } from '../src/data/import/dataset.import.ts';
import { OWASP_FILES } from '../src/data/sync/owasp/owasp.download.ts';
import { syncOwasp } from '../src/data/sync/owasp/owasp.sync.ts';
import { editOwasp, hideFromApi } from './change-log.owasp.ts';
import {
  addRichRepository,
  editRichRepository,
  removeRichRepository,
  renameRichRepository,
} from './change-log.github.ts';
import { FIXTURE_ORGANIZATIONS, useFixtureSync } from './github-api-standin.ts';
import { syncGithub } from '../src/data/sync/github/github.sync.ts';

const temps: string[] = [];
after(() => Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true }))));
const tempDir = async (name: string) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `cds-${name}-`));
  temps.push(dir);
  return dir;
};

/** The types a set of changes covers, by resource: `chapters: created,deleted,updated`. */
function coverage(changes: readonly Change[]): Record<string, string> {
  const types = new Map<string, Set<string>>();
  for (const change of changes) {
    const held = types.get(change.resource) ?? new Set<string>();
    held.add(change.type.split('.')[1]!);
    types.set(change.resource, held);
  }
  return Object.fromEntries([...types].map(([resource, actions]) => [resource, [...actions].sort().join(',')]));
}

/**
 * Runs `write`, then checks what it recorded against the full reads before and after it; returns its changes.
 * `transactions`: how its changes share data versions (one: all of them the version it ends with).
 */
async function recorded(t: TestApp, write: () => Promise<unknown>, oneTransaction: boolean): Promise<Change[]> {
  const before = await fullRead(t);
  await write();
  const after = await fullRead(t);
  const changes = await feedAfter(t, before.lastChangeId);
  assert.deepEqual(toldChanges(changes), expectedChanges(before, after), 'the log tells the difference of the reads');
  assert.deepEqual(
    Object.fromEntries(await applyChanges(t, before.records, changes, after.records)),
    Object.fromEntries(after.records),
    'the dumps and the changes after their last_change_id are the full read',
  );
  await checkReadBack(t, changes);
  const version = await readDataVersion(t.database.db);
  if (changes.length > 0) assert.equal(changes.at(-1)!.data_version, version, 'the last change: the version now');
  if (oneTransaction)
    assert.deepEqual(new Set(changes.map((c) => c.data_version)), new Set(changes.length ? [version] : []));
  for (const [i, change] of changes.entries())
    if (i > 0) assert.ok(change.data_version >= changes[i - 1]!.data_version, 'versions follow the ids');
  assert.equal(after.lastChangeId, changes.at(-1)?.id ?? before.lastChangeId, 'the new dumps include every change');
  return changes;
}

describe('the OWASP sync', () => {
  let t: TestApp;
  let dir: string;
  const now = () => new Date();
  before(async () => {
    t = await buildTestApp({ importBundled: true, env: { DUMPS_DIR: await tempDir('change-log-dumps') } });
    dir = await tempDir('change-log-owasp');
    for (const file of OWASP_FILES) await fs.copyFile(path.join(BUNDLED_DATA_DIR, 'owasp', file), path.join(dir, file));
  });
  after(() => t?.close());

  it('the first import into an empty database recorded no change; the same files again record none', async () => {
    assert.ok((await readDataVersion(t.database.db)) > 0, 'imported');
    assert.deepEqual(await feedAfter(t), []);
    const changes = await recorded(t, () => syncOwasp(t.database.db, { from: dir, now }), true);
    assert.deepEqual(changes, []);
  });

  it('edited files: each record created, updated or deactivated is one change, naming the fields that changed', async () => {
    await editOwasp(t.database.db, dir, now());
    const changes = await recorded(t, () => syncOwasp(t.database.db, { from: dir, now }), true);
    assert.deepEqual(coverage(changes), {
      chapters: 'created,deleted,updated',
      committees: 'created,deleted,updated',
      projects: 'created,deleted,updated',
      snapshots: 'created,deleted,updated',
      // Events and sponsors that leave the files are kept (owasp.write.ts): neither is ever deleted by a sync.
      events: 'created,updated',
      sponsors: 'created,updated',
    });
    const london = changes.find((c) => c.key === 'london')!;
    assert.deepEqual(london.changed_fields, ['name', 'latitude', 'longitude']);
    assert.deepEqual(await feedAfter(t, changes.at(-1)!.id), []);
    const again = await recorded(t, () => syncOwasp(t.database.db, { from: dir, now }), true);
    assert.deepEqual(again, [], 'the same files again: nothing');
  });

  it('a write of fields the API does not show records nothing', async () => {
    const key = await hideFromApi(dir);
    let report: Awaited<ReturnType<typeof syncOwasp>> | undefined;
    const changes = await recorded(t, async () => (report = await syncOwasp(t.database.db, { from: dir, now })), true);
    assert.equal(report?.owasp?.counts.chapters.updated, 1, `${key}: its row was written`);
    assert.deepEqual(changes, []);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM changes`.execute(t.database.db);
    assert.ok(rows[0]!.n > 0);
  });
});

describe('the GitHub sync', () => {
  const fixture = useFixtureSync();
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({
      sharedDatabase: fixture.database,
      env: { DUMPS_DIR: await tempDir('change-log-github-dumps') },
    });
  });
  after(() => t?.close());

  const sync = () =>
    syncGithub(fixture.database.db, {
      apiUrl: fixture.standIn.url,
      clock: fixture.clock,
      token: 'test-token',
      organizations: FIXTURE_ORGANIZATIONS,
      perPage: 5,
      retryBaseMs: 20,
      profileRequests: 1000,
    });

  it('a first sync (not an import) records every record it stores as created; a second records nothing', async () => {
    const changes = await recorded(t, sync, false);
    // Each record: created (a repository then updated by its own unit, with the counts its listing left out).
    assert.deepEqual(
      toldChanges(changes).filter((told) => !told.startsWith('created ')),
      [],
    );
    for (const resource of ['organizations', 'members', 'repositories', 'issues', 'labels', 'milestones', 'releases'])
      assert.ok(
        changes.some((c) => c.resource === resource),
        resource,
      );
    const version = await readDataVersion(fixture.database.db);
    assert.deepEqual(await recorded(t, sync, false), []);
    assert.equal(await readDataVersion(fixture.database.db), version);
  });

  it('a repository added upstream with its issue, label, milestone and release; a new author; an organization renamed', async () => {
    addRichRepository(fixture.standIn);
    const changes = await recorded(t, sync, false);
    // (The repository unit updates the counts the organization's listing left out: created, then updated.)
    const { snapshots, ...others } = coverage(changes);
    assert.ok(snapshots, 'a month with new records');
    assert.deepEqual(others, {
      repositories: 'created,updated',
      issues: 'created',
      labels: 'created',
      milestones: 'created',
      releases: 'created',
      members: 'created',
      organizations: 'updated',
    });
    assert.deepEqual(changes.find((c) => c.resource === 'organizations')!.changed_fields, ['name']);
  });

  it('each of them edited upstream, the author renamed', async () => {
    editRichRepository(fixture.standIn);
    const changes = await recorded(t, sync, false);
    const { snapshots, ...others } = coverage(changes);
    void snapshots;
    assert.deepEqual(others, {
      repositories: 'updated',
      issues: 'updated',
      labels: 'updated',
      milestones: 'updated',
      releases: 'updated',
      members: 'created,deleted,updated',
    });
    assert.deepEqual(changes.find((c) => c.resource === 'labels')!.changed_fields, ['color']);
    assert.deepEqual(changes.find((c) => c.resource === 'releases')!.changed_fields, ['name']);
  });

  it('the repository renamed: it and everything of it deleted under the old name and created under the new', async () => {
    renameRichRepository();
    const changes = await recorded(t, sync, false);
    const { snapshots, ...others } = coverage(changes);
    void snapshots;
    assert.deepEqual(others, {
      repositories: 'created,deleted',
      issues: 'created,deleted',
      labels: 'created,deleted',
      milestones: 'created,deleted',
      releases: 'created,deleted',
    });
  });

  it('the repository gone: it and everything of it deleted; then nothing', async () => {
    removeRichRepository(fixture.standIn);
    const changes = await recorded(t, sync, false);
    const { snapshots, ...others } = coverage(changes);
    assert.equal(snapshots, 'deleted', 'the month of its records only');
    assert.deepEqual(others, {
      repositories: 'deleted',
      issues: 'deleted',
      labels: 'deleted',
      milestones: 'deleted',
      releases: 'deleted',
    });
    assert.deepEqual(await recorded(t, sync, false), []);
  });
});
