// List pages are rendered to JSON by the database (fetchPage). These tests hold that rendering to
// what the driver reads from the same rows: hostile strings, timestamps with microseconds and
// odd offsets, tiny and negative floats, nulls, and the item fields in the order of the schema.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';
import { chapter, member, repository } from './factories.ts';
import { release } from './factories-github.ts';
import { ChapterItem } from '../src/api/v0/chapters/chapters.schemas.ts';
import { MemberItem } from '../src/api/v0/members/members.schemas.ts';
import { ReleaseItem } from '../src/api/v0/releases/releases.schemas.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const get = async (url: string) => {
  const res = await t.app.inject({ method: 'GET', url });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res;
};

/** A text PostgreSQL can store: any code points but NUL and lone surrogates. */
const text = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/\0/g, ''));
/** Microseconds between 1970 and 2100. */
const instant = fc.bigInt({ min: 0n, max: 4_102_444_800_000_000n });

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

test('chapter items equal the stored rows, field for field and in schema order, whatever the text, time or number', async () => {
  const db = t.database.db;
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          name: text,
          latitude: fc.oneof(
            fc.double({ min: -90, max: 90, noNaN: true }),
            fc.constantFrom(0, -0, 1e-7, -2.5e-5, 89.999999999),
          ),
          longitude: fc.double({ min: -180, max: 180, noNaN: true }),
          created: instant,
          updated: instant,
        }),
        { minLength: 1, maxLength: 30 },
      ),
      async (records) => {
        await db.deleteFrom('chapters').execute();
        for (const [i, r] of records.entries()) {
          await chapter(db, { key: `c${i}`, name: r.name, latitude: r.latitude, longitude: r.longitude });
          await sql`update chapters set created_at = to_timestamp(0) + (${String(r.created)} || ' microseconds')::interval,
                                        updated_at = to_timestamp(0) + (${String(r.updated)} || ' microseconds')::interval
                    where key = ${`c${i}`}`.execute(db);
        }
        // A data change as an import would announce it: the cached pages and totals go.
        t.app.shared.watcher.set(await bumpDataVersion(db));
        const rows = await db
          .selectFrom('chapters')
          .select(['key', 'name', 'latitude', 'longitude', 'created_at', 'updated_at'])
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute();
        const expected = rows.map((row) => ({
          ...row,
          created_at: iso(row.created_at),
          updated_at: iso(row.updated_at),
        }));
        const res = await get('/api/v0/chapters/?limit=100');
        const body = res.json();
        assert.deepEqual(body.items, JSON.parse(JSON.stringify(expected)));
        for (const item of body.items) assert.deepEqual(Object.keys(item), Object.keys(ChapterItem.properties));
        assert.equal(body.count, records.length);
      },
    ),
    { numRuns: 25 },
  );
});

test('null timestamps, escaped text and empty pages render as the schema says', async () => {
  const db = t.database.db;
  await member(db, { login: 'Nobody', name: 'Zoë "quoted" \\ back\nslash', url: 'https://github.com/Nobody' });
  const repositoryId = await repository(db, { owner_login: 'o' });
  await release(db, { repository_id: repositoryId, tag_name: 'v0', published_at: null });
  t.app.shared.watcher.set(await bumpDataVersion(db));
  const body = (await get('/api/v0/members/?limit=100')).json();
  const item = body.items.find((m: { login: string }) => m.login === 'Nobody');
  assert.deepEqual(Object.keys(item), Object.keys(MemberItem.properties));
  assert.equal(item.name, 'Zoë "quoted" \\ back\nslash');
  assert.equal(item.url, 'https://github.com/Nobody');
  const unpublished = (await get('/api/v0/releases/?limit=100'))
    .json()
    .items.find((r: { tag_name: string }) => r.tag_name === 'v0');
  assert.deepEqual(Object.keys(unpublished), Object.keys(ReleaseItem.properties));
  assert.equal(unpublished.published_at, null);

  const empty = await get('/api/v0/members/?limit=100&page=99');
  assert.equal(empty.headers['content-type'], 'application/json; charset=utf-8');
  assert.deepEqual(empty.json().items, []);
  assert.equal(empty.json().has_previous, true);
});
