// The timestamptz reader against what the database itself sends: random instants from year 1000
// to 3000 rendered in several session time zones (half-hour, 45-minute and historical offsets
// with seconds), plus the shapes that must go to the driver's parser.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { sql } from 'kysely';
import { createTestDb, type TestDatabase } from '../../test/helpers.ts';
import { timestampParser } from './timestamps.ts';
import { driverTimestampParser } from './index.ts';

// index.ts installs timestampParser globally and keeps the driver's own as driverTimestampParser.
const installed = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
const original = driverTimestampParser as (value: string) => unknown;

let database: TestDatabase;
before(async () => {
  database = await createTestDb({ migrate: false });
});
after(async () => database.drop());

const ZONES = ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham', 'America/Los_Angeles', 'Europe/Amsterdam'];
const MIN = -30_610_224_000_000_000n; // 1000-01-01, in microseconds since 1970
const MAX = 32_503_680_000_000_000n; // 3000-01-01

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

test('the installed parser is the positional one', () => {
  assert.notEqual(installed, original);
});

test('every instant reads back as the same millisecond the database holds, in every session time zone', async () => {
  await database.db.connection().execute(async (conn) => {
    for (const zone of ZONES) {
      await sql`select set_config('TimeZone', ${zone}, false)`.execute(conn);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.bigInt({ min: MIN, max: MAX }), { minLength: 1, maxLength: 50 }),
          async (micros) => {
            const { rows } = await sql<{ t: Date; text: string; n: string }>`
            select to_timestamp(0) + (n || ' microseconds')::interval as t,
                   (to_timestamp(0) + (n || ' microseconds')::interval)::text as text, n
            from unnest(${micros.map(String)}::text[]) as n`.execute(conn);
            for (const row of rows) {
              const expected = Number(floorDiv(BigInt(row.n), 1000n));
              assert.ok(row.t instanceof Date, row.text);
              assert.equal(row.t.getTime(), expected, `${zone}: ${row.text}`);
              assert.deepEqual(installed(row.text), original(row.text), row.text);
            }
          },
        ),
        { numRuns: 40 },
      );
    }
    await sql`select set_config('TimeZone', 'UTC', false)`.execute(conn);
  });
});

test('shapes outside the fast path give what the driver gives', () => {
  const parse = timestampParser(original as (value: string) => Date);
  for (const text of [
    'infinity',
    '-infinity',
    '0099-03-01 10:00:00+00',
    '0044-03-15 12:00:00+00 BC',
    '1900-01-01 00:00:00+00:19:32',
    '2024-02-29 23:59:59.999999+00',
    '2024-05-01 12:00:00+05:30',
    '2024-05-01 12:00:00.5-03:30',
    '2024-05-01 12:00:00.123456789+00',
    '2024-13-01 12:00:00+00',
    '2024-05-01 12:00:00',
    '2024-05-01T12:00:00Z',
    '2024-05-01 12:00:00+00x',
    '2024-0a-01 12:00:00+00',
  ]) {
    const ours = parse(text);
    const theirs = original(text);
    if (theirs instanceof Date && Number.isNaN(theirs.getTime())) {
      assert.ok(ours instanceof Date && Number.isNaN(ours.getTime()), text);
    } else {
      assert.deepEqual(ours, theirs, text);
    }
  }
});
