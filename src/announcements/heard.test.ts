// SharedChanges.noticed: every request that read a moved data-change counter waits for the new data version, not only
// the first of those answered at the same time (found by test/replicas.test.ts: two requests of one instance saw the
// same new value, the second was answered from the response cache of before).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createTestDb, type TestDatabase } from '../../test/helpers.ts';
import { bumpDataVersion, bumpRevocations } from './counters.queries.ts';
import { SharedChanges } from './heard.ts';

let database: TestDatabase;

before(async () => {
  database = await createTestDb();
});

after(async () => {
  await database.drop();
});

test('requests that read the same moved counter at once all wait for the version it announced', async () => {
  const changes = new SharedChanges(database.db, pino({ level: 'silent' }), undefined, 'test:');
  await changes.start();
  try {
    changes.noticed(['0', '1']);
    await changes.noticed(['0', '1']).refreshing;
    const before = changes.dataVersion.version;
    await bumpDataVersion(database.db);
    const first = changes.noticed(['0', '2']);
    const second = changes.noticed(['0', '2']);
    assert.ok(first.refreshing, 'the first sees the counter move');
    assert.ok(second.refreshing, 'the second, at the same time, waits for the same reading');
    await second.refreshing;
    assert.equal(changes.dataVersion.version, before + 1);
    assert.equal(changes.noticed(['0', '2']).refreshing, undefined, 'once read, nothing to wait for');
  } finally {
    await changes.stop();
  }
});

test("this process's own revocation forgets the remembered keys once, not again at the next poll; another's at the poll", async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const changes = new SharedChanges(database.db, pino({ level: 'silent' }), undefined, 'test:');
  await changes.start();
  // The poll that the interval started, if one is in flight.
  const poll = async () => {
    t.mock.timers.tick(1_000);
    await (changes as unknown as { polling?: Promise<void> }).polling;
  };
  try {
    let forgotten = 0;
    changes.onRevocation(() => forgotten++);
    await poll();
    assert.equal(forgotten, 0, 'nothing revoked, nothing forgotten');
    // Revoked here: the counter moves with the revocation's write, then the announcement.
    await bumpRevocations(database.db);
    await changes.revocation();
    const once = forgotten;
    assert.ok(once >= 1, 'forgotten at once');
    await poll();
    await poll();
    assert.equal(forgotten, once, 'not forgotten again by the polls after it');
    // Revoked by another instance (the counter moves, no announcement here): the poll forgets.
    await bumpRevocations(database.db);
    await poll();
    assert.equal(forgotten, once + 1, "another instance's revocation, heard at the poll");
  } finally {
    await changes.stop();
  }
});
