// The health history across re-imports of the bundled dataset (issue 47, docs/health.md): append-only, so a re-import
// with the clock moved back never writes a day before a project's latest point, nor rewrites one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { importDataset } from '../src/data/import/dataset.import.ts';
import { createTestDb, type TestDatabase } from './helpers.ts';

describe('the history across re-imports', () => {
  let bundled: TestDatabase;
  before(async () => {
    bundled = await createTestDb({ importBundled: true });
  });
  after(() => bundled?.drop());

  const points = async () =>
    (
      await sql<{ project_key: string; day: string; score: number; data_version: string }>`
        SELECT project_key, day::text AS day, score, data_version FROM project_health_history
        ORDER BY project_key, day`.execute(bundled.db)
    ).rows;

  it('a re-import with the clock moved back never writes a day before the latest, nor rewrites one', async () => {
    const at = (day: string) => () => new Date(`${day}T12:00:00Z`);
    // Far ahead of the template's own point, so that these are the latest days.
    await importDataset(bundled.db, undefined, { now: at('2031-03-01') });
    await importDataset(bundled.db, undefined, { now: at('2031-03-05') });
    const before = await points();
    const days = (rows: { day: string }[]) => [...new Set(rows.map((r) => r.day))].filter((d) => d >= '2031');
    assert.deepEqual(days(before), ['2031-03-01', '2031-03-05']);
    // The first day again: not rewritten, though the data version moved since.
    await importDataset(bundled.db, undefined, { now: at('2031-03-01') });
    assert.deepEqual(await points(), before);
  });
});
