import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { createTestDb, type TestDatabase } from '../../../test/helpers.ts';
import type { Db } from '../../db/index.ts';
import { ImportError } from '../base/import-error.ts';
import { changedRows } from '../base/resource-counts.ts';
import { distanceKm } from '../geocode/geocode.gazetteer.ts';
import { readOwaspData } from './owasp.read.ts';
import { writeOwaspData } from './owasp.write.ts';
import type { OwaspData, OwaspReport } from './owasp.types.ts';
import { endDateOf, locationOf } from './owasp.events.ts';
import { keyFromUrl, parseDay } from './owasp.fields.ts';
import { projectLevel } from './owasp.groups.ts';

const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../data/owasp');
const TABLES = ['chapters', 'committees', 'projects', 'events', 'sponsors', 'leaders', 'entity_leaders'] as const;

function write(db: Db, data: OwaspData): Promise<OwaspReport> {
  return db.transaction().execute((trx) => writeOwaspData(trx, data));
}

async function countBy(db: Db, table: string, column: string): Promise<Record<string, number>> {
  const result = await sql<{ value: string | null; n: number }>`
    SELECT ${sql.ref(column)}::text AS value, count(*)::int AS n FROM ${sql.table(table)} GROUP BY 1`.execute(db);
  return Object.fromEntries(result.rows.map((row) => [row.value ?? 'null', row.n]));
}

async function snapshot(db: Db): Promise<string> {
  const tables = await Promise.all(
    TABLES.map((table) => sql`SELECT * FROM ${sql.table(table)} ORDER BY id`.execute(db).then((r) => r.rows)),
  );
  return JSON.stringify(tables);
}

describe('OWASP import of the bundled files', () => {
  let database: TestDatabase;
  let db: Db;
  let data: OwaspData;
  let report: OwaspReport;

  before(async () => {
    database = await createTestDb();
    db = database.db;
    data = await readOwaspData(DATA_DIR);
    report = await write(db, data);
  });
  after(() => database.drop());

  it('stores every chapter and activates the 351 the website builds', async () => {
    assert.deepEqual(report.counts.chapters, { total: 608, inserted: 608, updated: 0, deactivated: 0 });
    assert.deepEqual(await countBy(db, 'chapters', 'is_active'), { true: 351, false: 257 });
    assert.equal(report.geocoded.activeChapters, 351);
    assert.ok(
      report.geocoded.activeChaptersWithCoordinates >= 310,
      `${report.geocoded.activeChaptersWithCoordinates} placed`,
    );
  });

  it('maps a chapter field by field', async () => {
    const london = await db.selectFrom('chapters').selectAll().where('key', '=', 'london').executeTakeFirstOrThrow();
    assert.equal(london.name, 'OWASP London');
    assert.equal(london.country, 'United Kingdom');
    assert.equal(london.region, 'Europe');
    assert.equal(london.description, '');
    assert.equal(london.level, '');
    assert.equal(london.url, 'https://owasp.org/www-chapter-london/');
    assert.deepEqual(london.related_urls, [
      'https://github.com/OWASP/www-chapter-london',
      'https://www.meetup.com/OWASP-London/',
    ]);
    assert.equal(london.created_at.toISOString(), '2019-09-12T00:00:00.000Z');
    assert.ok(
      distanceKm(london as { latitude: number; longitude: number }, { latitude: 51.507, longitude: -0.128 }) < 10,
    );
    const jeddah = await db.selectFrom('chapters').selectAll().where('key', '=', 'jeddah').executeTakeFirstOrThrow();
    assert.equal(jeddah.is_active, false, 'only in inactive_chapters.json');
    assert.equal(jeddah.created_at.toISOString(), '2020-06-23T00:00:00.000Z');
  });

  it('imports committees and projects with their levels', async () => {
    assert.deepEqual(report.counts.committees, { total: 4, inserted: 4, updated: 0, deactivated: 0 });
    assert.deepEqual(await countBy(db, 'projects', 'level'), {
      flagship: 15,
      production: 13,
      lab: 35,
      incubator: 206,
      other: 147,
    });
    assert.equal((await countBy(db, 'projects', 'is_active')).true, 273);
    const amass = await db.selectFrom('projects').selectAll().where('key', '=', 'amass').executeTakeFirstOrThrow();
    assert.deepEqual([amass.name, amass.level, amass.type, amass.is_active], ['OWASP Amass', 'flagship', 'code', true]);
    // The reference's four types; the website's other values ('code, tool', 'standards', blank…) are 'other'.
    assert.deepEqual(await countBy(db, 'projects', 'type'), { code: 169, documentation: 149, tool: 1, other: 97 });
    const aegis = await db
      .selectFrom('projects')
      .select('repository_paths')
      .where('key', '=', 'aegis4j')
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      aegis.repository_paths,
      ['owasp/www-project-aegis4j', 'gredler/aegis4j'],
      'the website repository, then the code URLs once',
    );
  });

  it("keeps a leader's GitHub login where the website gives a profile address, never an e-mail address", async () => {
    const logins = await db
      .selectFrom('leaders')
      .select(['name', 'github_login'])
      .where('github_login', '<>', '')
      .orderBy('github_login')
      .execute();
    assert.ok(
      logins.some((l) => l.github_login === 'lavelliane'),
      JSON.stringify(logins),
    );
    assert.ok(
      logins.every((l) => /^[a-z\d-]+$/i.test(l.github_login)),
      JSON.stringify(logins),
    );
  });

  it('imports events with categories, end dates and places', async () => {
    assert.deepEqual(await countBy(db, 'events', 'category'), { global: 5, appsec_days: 9, partner: 1 });
    const withEnd = await db.selectFrom('events').select('key').where('end_date', 'is not', null).execute();
    assert.equal(withEnd.length, 11);
    const usa = await db
      .selectFrom('events')
      .selectAll()
      .where('key', '=', 'owasp-global-appsec-usa-2026-san-francisco-ca')
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [usa.start_date, usa.end_date, usa.summary, usa.suggested_location],
      ['2026-11-02', '2026-11-06', 'November 2-6, 2026', 'San Francisco, CA'],
    );
    assert.ok(
      distanceKm(usa as { latitude: number; longitude: number }, { latitude: 37.775, longitude: -122.419 }) < 10,
    );
    assert.equal(report.geocoded.eventsWithCoordinates, 5);
  });

  it('imports sponsors with sponsor and member types', async () => {
    assert.deepEqual(await countBy(db, 'sponsors', 'sponsor_type'), {
      'Not a Sponsor': 70,
      Silver: 12,
      Gold: 1,
      Platinum: 1,
    });
    assert.deepEqual(await countBy(db, 'sponsors', 'member_type'), { Platinum: 14, Gold: 15, Silver: 54, '': 1 });
    const salesforce = await db
      .selectFrom('sponsors')
      .selectAll()
      .where('key', '=', 'salesforce')
      .executeTakeFirstOrThrow();
    assert.deepEqual([salesforce.is_member, salesforce.member_type], [true, 'Platinum']);
    assert.equal(salesforce.image_url, 'https://owasp.org/assets/images/corp-member-logo/salesforce.png');
  });

  it('links leaders to their groups in the listed order', async () => {
    assert.equal(report.counts.leaders.inserted, 1303);
    assert.equal(report.counts.leaderLinks.inserted, 1450);
    assert.equal(report.skippedLeaders.otherGroups, 16);
    const aarhus = await db
      .selectFrom('entity_leaders')
      .innerJoin('leaders', 'leaders.id', 'entity_leaders.leader_id')
      .innerJoin('chapters', 'chapters.id', 'entity_leaders.chapter_id')
      .select(['leaders.name', 'entity_leaders.position'])
      .where('chapters.key', '=', 'aarhus')
      .orderBy('entity_leaders.position')
      .execute();
    assert.deepEqual(aarhus[0], { name: 'Dennis Perto', position: 0 });
  });

  it('stores template placeholders as empty text', async () => {
    for (const [table, column, value] of [
      ['chapters', 'description', 'More info soon...'],
      ['chapters', 'region', 'Needs Website Update'],
      ['projects', 'description', 'A very brief, one-line description of your project'],
    ] as const) {
      const found = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${value}`.execute(db);
      assert.equal(found.rows[0]?.n, 0, `${table}.${column} holds "${value}"`);
    }
    assert.equal((await countBy(db, 'chapters', 'description'))[''], 606);
  });

  it('stores no e-mail address anywhere', async () => {
    // Domains start with a letter, so logo names like "logo@2x.png" are not taken for addresses.
    const email = '[A-Za-z0-9._%+-]+@[A-Za-z][A-Za-z0-9-]*(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}';
    const probe = await sql<{ hit: boolean }>`SELECT ${'leader.name@owasp.org'}::text ~ ${email}::text AS hit`.execute(
      db,
    );
    assert.equal(probe.rows[0]?.hit, true, 'the pattern finds an address');
    const columns = await sql<{ table_name: string; column_name: string }>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND data_type IN ('text', 'jsonb', 'character varying')`.execute(db);
    assert.ok(columns.rows.length > 20);
    for (const { table_name: table, column_name: column } of columns.rows) {
      const found = await sql<{ value: string }>`
        SELECT ${sql.ref(column)}::text AS value FROM ${sql.table(table)}
        WHERE ${sql.ref(column)}::text ~ ${email}::text LIMIT 1`.execute(db);
      assert.equal(found.rows[0]?.value, undefined, `${table}.${column}`);
    }
  });

  it('changes nothing when the same files are written again', async () => {
    const before = await snapshot(db);
    const again = await write(db, data);
    assert.equal(changedRows(again.counts), 0);
    assert.equal(await snapshot(db), before);
  });

  it('deactivates records that left the files, and reactivates them when they return', async () => {
    const without = {
      ...data,
      chapters: data.chapters.filter((chapter) => chapter.key !== 'london'),
      projects: data.projects?.filter((project) => project.key !== 'amass'),
      leaders: data.leaders && {
        ...data.leaders,
        links: data.leaders.links.filter((link) => link.groupKey !== 'aarhus'),
      },
    };
    const removed = await write(db, without);
    assert.equal(removed.counts.chapters.deactivated, 1);
    assert.equal(removed.counts.projects.deactivated, 1);
    assert.equal(removed.counts.leaderLinks.deactivated, 2);
    assert.equal(changedRows(removed.counts), 4);
    const london = await db
      .selectFrom('chapters')
      .select(['is_active', 'nest_updated_at'])
      .where('key', '=', 'london')
      .executeTakeFirstOrThrow();
    assert.equal(london.is_active, false);
    const restored = await write(db, data);
    assert.deepEqual([restored.counts.chapters.updated, restored.counts.projects.updated], [1, 1]);
    assert.equal(restored.counts.leaderLinks.inserted, 2);
  });
});

describe('OWASP files that cannot be imported', () => {
  let dir: string;
  const chapter = {
    name: 'Testville',
    url: 'https://owasp.org/www-chapter-testville/',
    created: '2020-01-02',
    updated: '2021-03-04',
    build: 'built',
    title: 'OWASP Testville',
    pitch: 'More info soon...',
    country: '',
    region: 'Europe',
  };

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'owasp-import-'));
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  async function rejects(files: Record<string, string>, file: string, record: string | undefined, detail: RegExp) {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(dir);
    for (const [name, text] of Object.entries(files)) await fs.writeFile(path.join(dir, name), text);
    await assert.rejects(readOwaspData(dir), (error: unknown) => {
      assert.ok(error instanceof ImportError, String(error));
      assert.deepEqual([error.file, error.record], [file, record]);
      assert.match(error.detail, detail);
      return true;
    });
  }

  it('reads a folder holding only chapters.json', async () => {
    await fs.writeFile(path.join(dir, 'chapters.json'), JSON.stringify([chapter]));
    const data = await readOwaspData(dir);
    assert.deepEqual(
      data.chapters.map((c) => [c.key, c.name, c.description, c.isActive]),
      [['testville', 'OWASP Testville', '', true]],
    );
    assert.equal(data.projects, undefined);
  });

  it('rejects a missing chapters.json, broken JSON, a wrong shape', async () => {
    await rejects({}, 'chapters.json', undefined, /cannot be read/);
    await rejects({ 'chapters.json': '[{"name": "x",' }, 'chapters.json', undefined, /invalid JSON/);
    await rejects({ 'chapters.json': '{"name": "x"}' }, 'chapters.json', undefined, /list of records/);
    await rejects({ 'chapters.json': '[42]' }, 'chapters.json', '#1', /not an object/);
  });

  it('names the record that misses a field or has an invalid date', async () => {
    const noUrl = { ...chapter, url: undefined, title: 'OWASP Nowhere' };
    await rejects(
      { 'chapters.json': JSON.stringify([chapter, noUrl]) },
      'chapters.json',
      '#2 "OWASP Nowhere"',
      /"url" is missing/,
    );
    const badDate = { ...chapter, created: '2021-02-30' };
    await rejects(
      { 'chapters.json': JSON.stringify([badDate]) },
      'chapters.json',
      '#1 "OWASP Testville"',
      /not a valid date/,
    );
    const project = { ...chapter, url: 'https://owasp.org/www-project-x/', updated: 'yesterday' };
    await rejects(
      { 'chapters.json': '[]', 'projects.json': JSON.stringify([project]) },
      'projects.json',
      '#1 "OWASP Testville"',
      /"updated"/,
    );
  });

  it('rejects bad YAML and impossible events', async () => {
    await rejects(
      { 'chapters.json': '[]', 'events.yml': '- category: Global\n  events: [oops\n' },
      'events.yml',
      undefined,
      /invalid YAML/,
    );
    const backwards =
      '- category: Global\n  events:\n    - name: Late\n      start-date: 2026-06-22\n      dates: June 2-3, 2026\n';
    await rejects(
      { 'chapters.json': '[]', 'events.yml': backwards },
      'events.yml',
      'group #1 "Global" event #1 "Late"',
      /end before/,
    );
    await rejects(
      { 'chapters.json': '[]', 'corp_members.yml': '- member: true\n  sponsor: 4\n' },
      'corp_members.yml',
      '#1',
      /"name"/,
    );
  });
});

describe('OWASP mapping rules', () => {
  it('reads event end dates from the dates text', () => {
    assert.equal(endDateOf('June 22-26, 2026', '2026-06-22'), '2026-06-26');
    assert.equal(endDateOf('November 30 - December 2, 2026', '2026-11-30'), '2026-12-02');
    assert.equal(endDateOf('December 30, 2026 - January 2, 2027', '2026-12-30'), '2027-01-02');
    assert.equal(endDateOf('September 22, 2026', '2026-09-22'), null);
    assert.equal(endDateOf('Sometime in autumn', '2026-09-22'), null);
  });

  it('takes the place from an event name', () => {
    assert.equal(locationOf('OWASP Global AppSec EU 2026 - Vienna, Austria'), 'Vienna, Austria');
    assert.equal(locationOf('OWASP AppSec Days - Virtual'), '');
    assert.equal(locationOf('OWASP LASCON 2026'), '');
  });

  it('maps project levels, keys and old dates', () => {
    assert.deepEqual([4, 3.5, 3, 2, 1, 0, -1, undefined].map(projectLevel), [
      'flagship',
      'production',
      'lab',
      'incubator',
      'other',
      'other',
      'other',
      'other',
    ]);
    assert.equal(keyFromUrl('https://owasp.org/www-chapter-London/', 'www-chapter-'), 'london');
    assert.equal(keyFromUrl('https://owasp.org/www-project-zap/', 'www-chapter-'), undefined);
    assert.equal(parseDay('Fri Oct  8 17:44:34 2021'), '2021-10-08');
    assert.equal(parseDay('2024-02-29'), '2024-02-29');
    assert.equal(parseDay('2023-02-29'), undefined);
  });
});
