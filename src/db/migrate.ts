import { Migrator, type Migration, type MigrationProvider, type MigrationResult } from 'kysely';
import type { Db } from './index.ts';
import * as m0001 from './migrations/0001_data_model.ts';
import * as m0002 from './migrations/0002_accounts.ts';
import * as m0003 from './migrations/0003_search_indexes.ts';
import * as m0004 from './migrations/0004_sync_state.ts';
import * as m0005 from './migrations/0005_reference_fields.ts';
import * as m0006 from './migrations/0006_snapshots.ts';
import * as m0007 from './migrations/0007_places_countries.ts';
import * as m0009 from './migrations/0009_list_indexes.ts';
import * as m0010 from './migrations/0010_tombstones.ts';
import * as m0011 from './migrations/0011_fulltext_search.ts';
import * as m0012 from './migrations/0012_nearest.ts';

// Registered explicitly so the list is the same under tsx, a build, and a bundled CLI.
const migrations: Record<string, Migration> = {
  '0001_data_model': m0001,
  '0002_accounts': m0002,
  '0003_search_indexes': m0003,
  '0004_sync_state': m0004,
  '0005_reference_fields': m0005,
  '0006_snapshots': m0006,
  '0007_places_countries': m0007,
  '0009_list_indexes': m0009,
  '0010_tombstones': m0010,
  '0011_fulltext_search': m0011,
  '0012_nearest': m0012,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export class MigrationError extends Error {
  constructor(
    readonly migration: string | undefined,
    cause: unknown,
  ) {
    super(`Migration ${migration ?? '(unknown)'} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'MigrationError';
  }
}

function migrator(db: Db): Migrator {
  return new Migrator({ db, provider });
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  return check(error, results);
}

export async function migrateDown(db: Db): Promise<string[]> {
  const { error, results } = await migrator(db).migrateDown();
  return check(error, results);
}

export async function pendingMigrations(db: Db): Promise<string[]> {
  const all = await migrator(db).getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}

function check(error: unknown, results: MigrationResult[] | undefined): string[] {
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new MigrationError(failed?.migrationName, error);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
