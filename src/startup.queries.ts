// Before anything else on a PostgreSQL server: make sure DATABASE_URL's database exists, creating it when the
// user may (the README's `DATABASE_URL=…/cds npm start` on a server that has only `postgres`).
import pg from 'pg';

export class DatabaseMissingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseMissingError';
  }
}

/** Quotes a name as a PostgreSQL identifier (doubling any `"`). */
function identifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Returns true when it created the database, false when it was there already. */
export async function ensureDatabaseExists(databaseUrl: string): Promise<boolean> {
  const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await probe.connect();
    return false;
  } catch (error) {
    // 3D000 invalid_catalog_name: the server answered, the database is not there. Anything else is not ours to fix.
    if ((error as { code?: string }).code !== '3D000') return false;
  } finally {
    await probe.end().catch(() => {});
  }
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const user = decodeURIComponent(url.username) || 'the connecting user';
  const where = `-h ${url.hostname} -p ${url.port || '5432'}${url.username ? ` -U ${decodeURIComponent(url.username)}` : ''}`;
  const instead = `create it first: createdb ${where} '${name}'  (or, as a superuser: CREATE DATABASE ${identifier(name)};)`;
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
  try {
    await admin.connect();
  } catch (error) {
    throw new DatabaseMissingError(
      `the database "${name}" does not exist and the "postgres" database to create it from cannot be reached (${(error as Error).message}); ${instead}`,
    );
  }
  try {
    await admin.query(`CREATE DATABASE ${identifier(name)}`);
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    // 42P04 duplicate_database: another instance starting at the same moment created it.
    if (code === '42P04') return false;
    if (code === '42501')
      throw new DatabaseMissingError(`the database "${name}" does not exist and ${user} may not create it; ${instead}`);
    throw new DatabaseMissingError(
      `the database "${name}" does not exist and could not be created (${(error as Error).message}); ${instead}`,
    );
  } finally {
    await admin.end().catch(() => {});
  }
}
