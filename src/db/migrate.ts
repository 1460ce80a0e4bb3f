import {
  Migrator,
  sql,
  type Migration,
  type MigrationProvider,
  type MigrationResult,
  type MigrationResultSet,
} from 'kysely';
import type { Db } from './index.ts';
import { lockMigrations } from './migration-lock.ts';
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
import * as m0013 from './migrations/0013_key_lifecycle.ts';
import * as m0014 from './migrations/0014_change_log.ts';
import * as m0015 from './migrations/0015_webhooks.ts';
import * as m0016 from './migrations/0016_project_health.ts';
import * as m0017 from './migrations/0017_contribute.ts';
import * as m0018 from './migrations/0018_edge_purge.ts';
import * as m0019 from './migrations/0019_contribute_candidates.ts';

// Registered explicitly so the list is the same under tsx, a build, and a bundled CLI.
// There is no 0008: no commit ever added one (the list went from 0007 to 0009 when 0009_list_indexes was written). The
// gap stays: Kysely records each applied migration by name, so renumbering would make every existing database run one
// again. A new migration takes the next number after the last.
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
  '0013_key_lifecycle': m0013,
  '0014_change_log': m0014,
  '0015_webhooks': m0015,
  '0016_project_health': m0016,
  '0017_contribute': m0017,
  '0018_edge_purge': m0018,
  '0019_contribute_candidates': m0019,
};

const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };

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
  // The transaction is migrate()'s, not Kysely's: Kysely would take its lock before it and release it after.
  return new Migrator({ db, provider, disableTransactions: true });
}

/**
 * Runs `step` in one transaction on one connection, which first takes the migrations' lock (migration-lock.ts):
 * instances starting at once migrate one after the other, the lock ends with the transaction, and a failed
 * migration leaves nothing behind (every pending migration is applied, or none, as Kysely did).
 */
async function migrate(db: Db, step: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    let committed = false;
    try {
      // Before Kysely creates its tables: two first migrations must not create them at once.
      await lockMigrations(connection);
      const { error, results } = await step(migrator(connection));
      const applied = check(error, results);
      await sql`commit`.execute(connection);
      committed = true;
      return applied;
    } finally {
      if (!committed) await sql`rollback`.execute(connection).catch(() => {});
    }
  });
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  return migrate(db, (m) => m.migrateToLatest());
}

export async function migrateDown(db: Db): Promise<string[]> {
  return migrate(db, (m) => m.migrateDown());
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
