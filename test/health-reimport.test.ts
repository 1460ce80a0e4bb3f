// The health history across re-imports of the bundled dataset (issue 47, docs/health.md): append-only, so a re-import
// with the clock moved back never writes a day before a project's latest point, nor rewrites one. And the import keeps
// the pull requests of the recorded issue listings (the health checks' inputs).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { importDataset } from '../src/data/import/dataset.import.ts';
import { createTestDb, type TestDatabase } from './helpers.ts';
import { FIXTURES_DIR } from './github-api-standin.ts';

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
  it('the dataset import keeps the pull requests of the recorded issue listings, apart from issues', async () => {
    // Every object with `pull_request` in the recorded responses, by id, with its repository and state.
    const manifest = JSON.parse(await fs.readFile(path.join(FIXTURES_DIR, 'manifest.json'), 'utf8')) as {
      file: string;
    }[];
    const recorded = new Map<number, string>();
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(walk);
      if (typeof value !== 'object' || value === null) return;
      const o = value as Record<string, unknown>;
      if ('pull_request' in o && typeof o.repository_url === 'string') {
        const repository = o.repository_url.replace('https://api.github.com/repos/', '').toLowerCase();
        recorded.set(Number(o.id), `${repository}#${String(o.number)} ${String(o.state)}`);
      }
      Object.values(o).forEach(walk);
    };
    for (const { file } of manifest) walk(JSON.parse(await fs.readFile(path.join(FIXTURES_DIR, file), 'utf8')));
    const { rows } = await sql<{ github_id: string; pull: string }>`
      SELECT q.github_id, lower(r.owner_login || '/' || r.name) || '#' || q.number || ' ' || q.state AS pull
      FROM pull_requests q JOIN repositories r ON r.id = q.repository_id ORDER BY q.github_id`.execute(bundled.db);
    assert.ok(recorded.size > 0);
    assert.deepEqual(
      rows.map((row) => [Number(row.github_id), row.pull]),
      [...recorded].sort(([a], [b]) => a - b),
    );
    const { rows: issues } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM issues WHERE github_id = ANY(${[...recorded.keys()]}::bigint[])`.execute(bundled.db);
    assert.equal(Number(issues[0]!.n), 0);
  });
});
