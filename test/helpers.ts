// Test databases: every test file gets its own, dropped afterwards, so runs never share state.
// With DATABASE_URL set (CI's second pass) it is a fresh database on that PostgreSQL server;
// otherwise an in-memory PGlite.
import crypto from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

export interface TestDatabase extends Database {
  /** The connection string of the test database, when it is a PostgreSQL server. */
  readonly url: string | undefined;
  /** Closes the connections and drops the database. */
  drop(): Promise<void>;
}

export const serverUrl = process.env.DATABASE_URL || undefined;

export async function createTestDb(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  if (!serverUrl) {
    const database = await openDatabase({ dataDir: 'memory://' });
    if (migrate) await migrateToLatest(database.db);
    return { ...database, url: undefined, drop: () => database.close() };
  }
  const name = `cds_test_${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 5 });
  if (migrate) await migrateToLatest(database.db);
  return {
    ...database,
    url: url.toString(),
    async drop() {
      await database.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Runs one statement on the server of DATABASE_URL (CREATE or DROP DATABASE). */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
