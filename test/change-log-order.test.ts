// The change log's order under concurrent writers (issue 43, item 1; migration 0014): a reader that remembers the last
// id it saw and asks for the changes after it never misses one, however transactions overlap: begun in one order and
// committed in another, a change rolled back to a savepoint, a write of invisible fields first, a sync at the same time
// as direct writes. Each change carries the data version its transaction committed, one per transaction. On the
// PostgreSQL pass: the embedded database has one connection, so its writers never overlap.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestDb, serverUrl, type TestDatabase } from './helpers.ts';
import { changesAfter } from './changes.ts';
import type { Change } from '../src/changes/change-log.ts';
import { syncOwasp } from '../src/data/sync/owasp/owasp.sync.ts';
import { BUNDLED_DATA_DIR } from '../src/data/import/dataset.import.ts';
import path from 'node:path';
import { WRITE_LOCK } from '../src/data/base/write-lock.queries.ts';

const skip = !serverUrl && 'the embedded database has one connection: its writers never overlap';

/** A reader polling "after the last id I saw", as a client of the feed does. */
class Reader {
  seen: Change[] = [];
  constructor(private readonly database: TestDatabase) {}
  async poll(): Promise<void> {
    const page = await changesAfter(this.database.db, this.seen.at(-1)?.id ?? 0);
    this.seen.push(...page);
  }
}

/** One connection of its own, whose statements may be left waiting (on the write lock) while others go on. */
class Writer {
  pending: Promise<unknown> | undefined;
  done = true;
  pid = 0;
  private constructor(readonly client: pg.Client) {}
  static async open(url: string): Promise<Writer> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const writer = new Writer(client);
    writer.pid = Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    return writer;
  }
  /** Sends a statement without waiting for it. */
  fire(text: string): void {
    this.done = false;
    this.pending = this.client.query(text).finally(() => (this.done = true));
  }
  async run(text: string): Promise<void> {
    this.fire(text);
    await this.pending;
  }
}

let sequence = 0;
/**
 * An insert of a new visible record into `table`. Each writer of a test writes tables of its own: two transactions
 * writing one table are already serialized by its version row (migration 0010, table_versions), whatever the log does.
 */
function insertInto(table: 'events' | 'sponsors' | 'committees' | 'organizations' | 'members'): string {
  const n = ++sequence;
  switch (table) {
    case 'events':
      return `INSERT INTO events (key, name, category, start_date, end_date, created_at, updated_at)
        VALUES ('order-${n}', 'Order ${n}', 'other', '2030-01-01', '2030-01-02', now(), now())`;
    case 'sponsors':
      return `INSERT INTO sponsors (key, name) VALUES ('order-${n}', 'Order ${n}')`;
    case 'committees':
      return `INSERT INTO committees (key, name, is_active, created_at, updated_at)
        VALUES ('order-${n}', 'Order ${n}', true, now(), now())`;
    default:
      return `INSERT INTO ${table} (github_id, login, created_at, updated_at)
        VALUES (${9_000_000 + n}, 'order-${n}', now(), now())`;
  }
}

describe('concurrent writers', { skip }, () => {
  let database: TestDatabase;
  let writers: Writer[];
  let admin: pg.Client;
  before(async () => {
    database = await createTestDb();
    writers = await Promise.all([1, 2, 3, 4].map(() => Writer.open(database.url!)));
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  after(async () => {
    await Promise.all([...writers, { client: admin }].map(({ client }) => client.end()));
    await database?.drop();
  });

  /** Until every writer's statement has either finished or waits on a lock (the write lock): no clock involved. */
  async function settle(): Promise<void> {
    for (;;) {
      const busy = writers.filter((w) => !w.done).map((w) => w.pid);
      if (busy.length === 0) return;
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND wait_event_type = 'Lock'`,
        [busy],
      );
      const waiting = new Set(rows.map((r) => Number(r.pid)));
      if (writers.every((w) => w.done || waiting.has(w.pid))) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Every change committed, in id order, read once everything is over. */
  const everything = () => changesAfter(database.db);

  async function checkReader(reader: Reader): Promise<void> {
    await reader.poll();
    assert.deepEqual(
      reader.seen.map((c) => c.id),
      (await everything()).map((c) => c.id),
      'the reader saw every change, each once',
    );
  }

  it('begun 1, 2, 3 and committed 3, 2, 1: the reader following ids misses nothing', async () => {
    const reader = new Reader(database);
    const [w1, w2, w3] = writers as [Writer, Writer, Writer];
    for (const w of [w1, w2, w3]) await w.run('BEGIN');
    const tables = new Map([
      [w1, 'events'],
      [w2, 'sponsors'],
      [w3, 'committees'],
    ] as const);
    const insert = (w: Writer) => insertInto(tables.get(w)!);
    await w1.run("UPDATE events SET suggested_location = 'nowhere'"); // a write of nothing visible: no lock taken
    await w3.run(insert(w3));
    w2.fire(insert(w2));
    await settle();
    w1.fire(insert(w1));
    await settle();
    assert.ok(!w2.done && !w1.done, 'both wait for the write lock the first change of the third took');
    await reader.poll();
    assert.deepEqual(reader.seen, [], 'nothing committed yet');
    for (const w of [w3, w2, w1]) {
      await w.pending;
      await w.run(insert(w));
      await reader.poll();
      await w.run('COMMIT');
      await settle();
      await reader.poll();
    }
    await checkReader(reader);
    assert.equal(reader.seen.length, 6);
  });

  it('a change rolled back to a savepoint (its lock and its version with it); the same transaction writes again later', async () => {
    const reader = new Reader(database);
    const [w1, w2] = writers as [Writer, Writer];
    await w1.run('BEGIN');
    await w1.run('SAVEPOINT s');
    await w1.run(insertInto('events'));
    await w1.run('ROLLBACK TO SAVEPOINT s');
    await w2.run('BEGIN');
    w2.fire(insertInto('sponsors'));
    await settle();
    w1.fire(insertInto('events'));
    await settle();
    // Whichever holds the write lock now commits first; the other then takes its id.
    const [first, second] = w2.done ? [w2, w1] : [w1, w2];
    assert.ok(!second.done, 'one of them waits');
    await first.run('COMMIT');
    await reader.poll();
    await second.pending;
    await reader.poll();
    await second.run('COMMIT');
    await checkReader(reader);
  });

  it('a sync and four connections writing at once; a reader polling all along sees every change once, in order', async () => {
    const reader = new Reader(database);
    let writing = true;
    const polling = (async () => {
      while (writing) {
        await reader.poll();
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const versions = new Map<number, number>();
    // Two connections write tables the sync does not, leaving the write lock to the log's triggers; two write tables
    // the sync writes, and take the write lock first as every writer of the service does. (Without it, such a writer
    // and the sync could deadlock: it holding a table's version row and waiting for the lock at the end of its
    // statement, the sync holding the lock and waiting for that row; PostgreSQL would roll one back.)
    const plan = [
      ['organizations', false],
      ['members', false],
      ['events', true],
      ['sponsors', true],
    ] as const;
    const direct = async (writer: Writer, index: number) => {
      const [table, lock] = plan[index]!;
      const mine: number[] = [];
      for (let n = 0; n < 15; n++) {
        await writer.run('BEGIN');
        if (lock) await writer.run(`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
        await writer.run(insertInto(table));
        mine.push(sequence);
        const where = (back: number) =>
          `WHERE ${table === 'events' || table === 'sponsors' ? 'key' : 'login'} = 'order-${mine.at(-back) ?? 0}'`;
        if (n % 3 === index % 3) await writer.run(`UPDATE ${table} SET name = 'Renamed ${n}' ${where(2)}`);
        if (n % 5 === 4) await writer.run(`DELETE FROM ${table} ${where(4)}`);
        const { rows } = await writer.client.query<{ id: string; version: string }>(
          `SELECT c.id, (SELECT value #>> '{}' FROM app_meta WHERE key = 'data_version') AS version
           FROM changes c WHERE c.xmin::text = txid_current()::text`,
        );
        await writer.run(n % 7 === 6 ? 'ROLLBACK' : 'COMMIT');
        if (n % 7 !== 6) for (const row of rows) versions.set(Number(row.id), Number(row.version));
      }
    };
    await Promise.all([
      ...writers.map((writer, index) => direct(writer, index)),
      syncOwasp(database.db, { from: path.join(BUNDLED_DATA_DIR, 'owasp') }),
    ]);
    writing = false;
    await polling;
    await checkReader(reader);
    const all = await everything();
    assert.ok(all.length > 600, `${all.length} changes`);
    for (const [i, change] of all.entries()) {
      if (i > 0) assert.ok(change.data_version >= all[i - 1]!.data_version, 'versions follow the ids');
      const version = versions.get(change.id);
      if (version !== undefined) assert.equal(change.data_version, version, 'the version its transaction committed');
    }
    const sync = all.filter((c) => !c.key.startsWith('order-'));
    assert.equal(new Set(sync.map((c) => c.data_version)).size, 1, 'the sync: one transaction, one version');
  });
});
