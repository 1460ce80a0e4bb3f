// The choice of each read (db/server/replicas.ts) without servers of its own: positions, states, and a query run again on the
// primary when its replica fails. test/replicas.test.ts runs the real thing (a primary, a streaming replica, two instances).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { createTestDb, type TestDatabase } from '../../../test/helpers.ts';
import type { Database, Db } from '../index.ts';
import type { DB } from '../schema.ts';
import { parseLsn, replayable, Replica, Replicas } from './replicas.ts';

let primary: TestDatabase;

before(async () => {
  primary = await createTestDb();
});

after(async () => {
  await primary.drop();
});

/** A database whose every connection is refused, as a replica that is down. */
function unreachable(): Db {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const pool = { connect: () => Promise.reject(refused), end: async () => {} };
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

function setUp(replicaDb: Db, maxLagMs = 1_000) {
  let now = 1_000_000;
  const database: Database = { db: replicaDb, kind: 'postgres', close: async () => {} };
  const replica = new Replica('replica:5432', database);
  const replicas = new Replicas(primary, [replica], { maxLagMs, retryMs: 500, clock: () => now });
  // As a poll leaves it.
  const polled = (position: string) => {
    replica.polled = true;
    replica.replayed = parseLsn(position);
  };
  return { replica, replicas, polled, advance: (ms: number) => (now += ms) };
}

const wal = (position: string) => ({ position, blockSize: 8192, segmentSize: 16 * 1024 * 1024 });

test('WAL positions: two hex halves; a position just past a page header counts as the page boundary', () => {
  assert.equal(parseLsn('0/3001178'), 0x3001178n);
  assert.equal(parseLsn('16/B374D848'), (0x16n << 32n) | 0xb374d848n);
  assert.equal(replayable(wal('0/3002018')), 0x3002000n, 'a page: 24 bytes of header');
  assert.equal(replayable(wal('0/3000028')), 0x3000000n, "a segment's first page: 40 bytes");
  assert.equal(replayable(wal('0/3002028')), 0x3002028n, 'elsewhere a record may end 40 bytes into a page');
  assert.equal(replayable(wal('0/3001178')), 0x3001178n);
});

test('a read goes to the replica only once it has replayed the newest version’s position', async () => {
  const { replica, replicas, polled } = setUp(primary.db);
  assert.equal(replicas.state(replica), 'starting');
  replicas.observed(wal('0/3000100'), true);
  polled('0/3000100');
  assert.equal(replicas.state(replica), 'current');
  await sql`select 1`.execute(replicas.db);
  assert.equal(replica.reads, 1);

  // A new version the replica has not replayed: the primary, until a poll finds it replayed.
  replicas.observed(wal('0/3000200'), true);
  assert.equal(replicas.state(replica), 'behind');
  await sql`select 1`.execute(replicas.lists);
  assert.deepEqual([replica.reads, replica.skipped.behind, replicas.primaryReads], [1, 1, 1]);
  polled('0/3000200');
  await sql`select 1`.execute(replicas.lists);
  assert.equal(replica.reads, 2);

  // The primary moving on without a new version (sessions, keys) does not send reads away from the replica.
  replicas.observed(wal('0/3000300'), false);
  assert.equal(replicas.state(replica), 'current');
});

test('a replica behind the primary by more than the maximum lag is skipped, and taken again once it catches up', () => {
  const { replica, replicas, polled, advance } = setUp(primary.db, 1_000);
  replicas.observed(wal('0/3000100'), true);
  polled('0/3000100');
  replicas.observed(wal('0/3000400'), false);
  advance(900);
  assert.equal(replicas.state(replica), 'current', 'it has replayed the newest version: lagging 0.9 s is allowed');
  advance(200);
  assert.equal(replicas.lagMs(replica), 1_100);
  assert.equal(replicas.state(replica), 'lagging');
  assert.equal(replicas.choose(), undefined);
  assert.equal(replica.skipped.lagging, 1);
  polled('0/3000400');
  assert.equal(replicas.lagMs(replica), 0);
  assert.equal(replicas.state(replica), 'current');
});

test('a replica that cannot be reached: the read runs on the primary, the replica is down until a poll succeeds', async () => {
  const { replica, replicas, polled, advance } = setUp(unreachable());
  replicas.observed(wal('0/3000100'), true);
  polled('0/3000100');
  const { rows } = await sql<{ n: number }>`select 1 as n`.execute(replicas.db);
  assert.deepEqual(rows, [{ n: 1 }]);
  assert.deepEqual([replica.reads, replica.skipped.down, replicas.primaryReads], [0, 1, 1]);
  assert.equal(replicas.state(replica), 'down');
  advance(600);
  // Still down: only a poll that succeeds after the retry delay brings it back.
  assert.equal(replicas.state(replica), 'down');
});

test('an error of the query itself is the answer: not run again, the replica stays current', async () => {
  const { replica, replicas, polled } = setUp(primary.db);
  replicas.observed(wal('0/3000100'), true);
  polled('0/3000100');
  await assert.rejects(sql`select 1/0`.execute(replicas.db), /division by zero/);
  assert.deepEqual([replica.reads, replicas.primaryReads], [1, 0]);
  assert.equal(replicas.state(replica), 'current');
});

test('a server that is not in recovery (a primary, a promoted replica) is never read from, and said in the log', async () => {
  const { replica, replicas } = setUp(primary.db);
  const warnings: string[] = [];
  replicas.start({ info: () => {}, warn: (_object, message) => warnings.push(message) });
  try {
    const deadline = Date.now() + 10_000;
    while (replicas.state(replica) === 'starting' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    replicas.observed(wal('0/0'), true);
    assert.equal(replicas.state(replica), 'not-standby');
    assert.equal(replicas.choose(), undefined);
    assert.deepEqual(warnings, ['read replica skipped: reading from the primary']);
  } finally {
    replicas.stop();
  }
});
