// The same migrations on PGlite and PostgreSQL: up, idempotent re-run, constraints, down, up again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { migrateDown, migrateToLatest, pendingMigrations } from '../src/db/migrate.ts';
import { createTestDb, type TestDatabase } from './helpers.ts';

const TABLES = [
  'api_keys',
  'app_meta',
  'changes',
  'chapters',
  'committees',
  'contribute_candidates',
  'edge_purge',
  'entity_leaders',
  'events',
  'issue_assignees',
  'issue_labels',
  'issues',
  'labels',
  'leaders',
  'members',
  'milestones',
  'organization_members',
  'organizations',
  'project_health',
  'project_health_history',
  'projects',
  'pull_requests',
  'releases',
  'repositories',
  'search_words',
  'sessions',
  'snapshots',
  'sponsors',
  'sync_requests',
  'sync_state',
  'table_versions',
  'tombstones',
  'users',
  'webhook_attempts',
  'webhooks',
];
const ALL = [
  '0001_data_model',
  '0002_accounts',
  '0003_search_indexes',
  '0004_sync_state',
  '0005_reference_fields',
  '0006_snapshots',
  '0007_places_countries',
  '0009_list_indexes',
  '0010_tombstones',
  '0011_fulltext_search',
  '0012_nearest',
  '0013_key_lifecycle',
  '0014_change_log',
  '0015_webhooks',
  '0016_project_health',
  '0017_contribute',
  '0018_edge_purge',
  '0019_contribute_candidates',
];

let t: TestDatabase;
before(async () => {
  t = await createTestDb({ migrate: false });
});
after(() => t.drop());

async function tables(): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%' ORDER BY 1`.execute(t.db);
  return rows.map((r) => r.name);
}

test('migrations apply on an empty database, then there is nothing left to apply', async () => {
  assert.deepEqual(await pendingMigrations(t.db), ALL);
  assert.deepEqual(await migrateToLatest(t.db), ALL);
  assert.deepEqual(await tables(), TABLES);
  assert.deepEqual(await migrateToLatest(t.db), []);
  assert.deepEqual(await pendingMigrations(t.db), []);
});

/** A chapter's required columns but its key. */
const CHAPTER = {
  name: 'x',
  related_urls: '[]',
  contribution_data: '{}',
  contribution_stats: '{}',
  created_at: '2020-01-01',
  updated_at: '2020-01-01',
};

test('public identifiers are unique case-insensitively', async () => {
  await t.db
    .insertInto('chapters')
    .values({ ...CHAPTER, key: 'london' })
    .execute();
  await assert.rejects(
    t.db
      .insertInto('chapters')
      .values({ ...CHAPTER, key: 'London' })
      .execute(),
    /duplicate key|unique/i,
  );
  await t.db.insertInto('organizations').values({ github_id: 1, login: 'OWASP' }).execute();
  await assert.rejects(
    t.db.insertInto('organizations').values({ github_id: 2, login: 'owasp' }).execute(),
    /duplicate key|unique/i,
  );
});

test('check constraints refuse impossible values', async () => {
  await assert.rejects(
    t.db
      .insertInto('chapters')
      .values({ ...CHAPTER, key: 'far', latitude: 91 })
      .execute(),
    /check/i,
  );
  const event = {
    key: 'e',
    name: 'e',
    category: 'global' as const,
    created_at: '2020-01-01',
    updated_at: '2020-01-01',
  };
  await assert.rejects(
    t.db
      .insertInto('events')
      .values({ ...event, start_date: '2020-02-02', end_date: '2020-02-01' })
      .execute(),
    /check/i,
  );
  const project = { key: 'p', name: 'p', level: 'lab' as const, created_at: '2020-01-01', updated_at: '2020-01-01' };
  await assert.rejects(
    t.db
      .insertInto('projects')
      .values({ ...project, type: 'code, tool' as 'code' })
      .execute(),
    /check/i,
  );
});

test('the immutable unaccent wrapper works on this engine', async () => {
  const { rows } = await sql<{ v: string }>`SELECT cds_unaccent('Diyarbakır São Paulo Bogotá Logroño') AS v`.execute(
    t.db,
  );
  assert.equal(rows[0]!.v, 'Diyarbakir Sao Paulo Bogota Logrono');
});

test('down removes everything, and up rebuilds it', async () => {
  assert.deepEqual(await migrateDown(t.db), ['0019_contribute_candidates']);
  assert.deepEqual(await migrateDown(t.db), ['0018_edge_purge']);
  assert.deepEqual(await migrateDown(t.db), ['0017_contribute']);
  assert.deepEqual(await migrateDown(t.db), ['0016_project_health']);
  assert.deepEqual(await migrateDown(t.db), ['0015_webhooks']);
  assert.deepEqual(await migrateDown(t.db), ['0014_change_log']);
  assert.deepEqual(await migrateDown(t.db), ['0013_key_lifecycle']);
  assert.deepEqual(await migrateDown(t.db), ['0012_nearest']);
  assert.deepEqual(await migrateDown(t.db), ['0011_fulltext_search']);
  assert.deepEqual(await migrateDown(t.db), ['0010_tombstones']);
  assert.deepEqual(await migrateDown(t.db), ['0009_list_indexes']);
  assert.deepEqual(await migrateDown(t.db), ['0007_places_countries']);
  assert.deepEqual(await migrateDown(t.db), ['0006_snapshots']);
  assert.deepEqual(await migrateDown(t.db), ['0005_reference_fields']);
  assert.deepEqual(await migrateDown(t.db), ['0004_sync_state']);
  assert.deepEqual(await migrateDown(t.db), ['0003_search_indexes']);
  assert.deepEqual(await migrateDown(t.db), ['0002_accounts']);
  assert.deepEqual(await migrateDown(t.db), ['0001_data_model']);
  assert.deepEqual(await tables(), []);
  assert.deepEqual(await migrateToLatest(t.db), ALL);
  assert.deepEqual(await tables(), TABLES);
});
