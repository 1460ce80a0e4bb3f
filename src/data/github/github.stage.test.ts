// The dataset import's staged issues (github.stage.ts: issues sent to TEMP tables as they are read,
// versions chosen in SQL) against the in-memory path the live sync uses: same report, same rows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createTestDb, type TestDatabase } from '../../../test/helpers.ts';
import type { Db } from '../../db/index.ts';
import { BUNDLED_DATA_DIR } from '../import.ts';
import { readGithubData } from './github.read.ts';
import { writeGithubData, type GithubReport } from './github.write.ts';

const DIR = path.join(BUNDLED_DATA_DIR, 'github');
const TABLES = ['organizations', 'members', 'organization_members', 'repositories', 'milestones', 'issues', 'labels',
  'issue_labels', 'issue_assignees', 'releases'] as const;
type Json = Record<string, unknown>;

let memory: TestDatabase;
let staged: TestDatabase;
const temps: string[] = [];
before(async () => {
  [memory, staged] = await Promise.all([createTestDb(), createTestDb()]);
});
after(async () => {
  await Promise.all([memory.drop(), staged.drop()]);
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

const importInMemory = async (dir: string) => {
  const data = await readGithubData(dir);
  return memory.db.transaction().execute((trx) => writeGithubData(trx, data));
};
const importStaged = (dir: string) =>
  staged.db.transaction().execute(async (trx) => writeGithubData(trx, await readGithubData(dir, trx)));

// Every row but the service's own timestamps (row ids included: both paths insert in the same order).
const snapshot = async (db: Db) => Object.fromEntries(await Promise.all(TABLES.map(async (table) => {
  const { rows } = await sql.raw<Json>(`SELECT * FROM ${table} ORDER BY 1, 2`).execute(db);
  return [table, rows.map(({ nest_created_at: _c, nest_updated_at: _u, ...row }) => row)] as const;
})));
const issueTitle = async (db: Db, githubId: number) =>
  (await sql<{ title: string }>`SELECT title FROM issues WHERE github_id = ${githubId}`.execute(db)).rows[0]?.title;

/** The bundled recordings plus files in front of and after them (`first`, `last`: file → [request, body]). */
async function dataset(first: Record<string, [string, unknown]>, last: Record<string, [string, unknown]>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'github-stage-'));
  temps.push(dir);
  await fs.cp(DIR, dir, { recursive: true });
  const manifest: Json[] = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8'));
  const entries = async (files: Record<string, [string, unknown]>) => Promise.all(Object.entries(files).map(async ([file, [request, body]]) => {
    await fs.writeFile(path.join(dir, file), JSON.stringify(body));
    return { file, requests: [`GET ${request} -> 200`] };
  }));
  const all = [...(await entries(first)), ...manifest, ...(await entries(last))];
  await fs.writeFile(path.join(dir, 'manifest.json'), JSON.stringify(all));
  return dir;
}

let issue: Json;
before(async () => {
  const issues: Json[] = JSON.parse(await fs.readFile(path.join(DIR, 'sferik-rails_admin/issues.json'), 'utf8'));
  issue = issues.find((candidate) => !('pull_request' in candidate))!;
});

test('several copies of an issue across files: the newest wins, then the most complete; an issue of an unknown repository is skipped', async () => {
  const id = issue.id as number;
  const newer: Json = { ...issue, title: 'the newest copy', updated_at: '2030-01-02T00:00:00Z' };
  const older = { ...issue, title: 'an older copy', updated_at: '2030-01-01T00:00:00Z' };
  // As new as `newer` but with fewer fields: loses to it, though read first.
  const lessComplete: Json = { ...newer, title: 'a less complete copy' };
  delete lessComplete.body;
  delete lessComplete.milestone;
  const stray = {
    ...issue, id: 987_654_321, number: 1, title: 'an issue of a repository not in the source',
    repository_url: 'https://api.github.com/repos/nobody/absent', url: 'https://api.github.com/repos/nobody/absent/issues/1',
  };
  const dir = await dataset(
    { 'first.json': ['/repositories/1/issues', [lessComplete, stray]] },
    { 'last.json': ['/repositories/1/issues', [older, newer, stray]] },
  );
  const inMemory: GithubReport = await importInMemory(dir);
  const inStage: GithubReport = await importStaged(dir);
  assert.deepEqual(inStage, inMemory);
  assert.deepEqual(inStage.issues, { total: 40, inserted: 40, updated: 0, deactivated: 0, skipped: 1 });
  assert.equal(await issueTitle(staged.db, id), 'the newest copy');
  assert.equal(await issueTitle(staged.db, 987_654_321), undefined);
  assert.deepEqual(await snapshot(staged.db), await snapshot(memory.db));

  // Again, with the issue's labels given by a response of their own, an id-less label, and the older copy
  // now the newest: same updates counted, same rows.
  const labels = issue.labels as Json[];
  const relabelled = { ...older, updated_at: '2031-01-01T00:00:00Z', labels: [{ name: labels[0]?.name ?? 'bug', color: 'ffffff' }] };
  const again = await dataset(
    { 'first.json': ['/repositories/1/issues', [relabelled]] },
    { 'labels.json': ['/repos/sferik/rails_admin/issues/' + String(issue.number) + '/labels', []] },
  );
  const [secondMemory, secondStage] = [await importInMemory(again), await importStaged(again)];
  assert.deepEqual(secondStage, secondMemory);
  assert.equal(secondStage.issues.updated, 1);
  assert.equal(await issueTitle(staged.db, id), 'an older copy');
  assert.deepEqual(await snapshot(staged.db), await snapshot(memory.db));
});

test('a bad issue of a known repository fails the staged import and changes nothing', async () => {
  const before = await snapshot(staged.db);
  const dir = await dataset({ 'bad.json': ['/repositories/1/issues', [{ ...issue, state: 'reopened' }]] }, {});
  await assert.rejects(importStaged(dir), /"state" is not open or closed/);
  await assert.rejects(importInMemory(dir), /"state" is not open or closed/);
  assert.deepEqual(await snapshot(staged.db), before);
});
