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

/**
 * PgBouncer's answer for a database its server lacks (`database "x" does not exist`, passed on from the server's
 * login) or that it does not serve (`no such database: x`): a protocol error, 08P01, not PostgreSQL's 3D000.
 */
function poolerMissingDatabase(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return code === '08P01' && /^(database ".*" does not exist|no such database: )/.test(message ?? '');
}

/**
 * Returns true when it created the database, false when it was there already. Behind a pooler a missing database is
 * not created: the pooler refuses connections to it for a while after its failed login (PgBouncer's
 * server_login_retry, 15 s), and may not serve the `postgres` database; the message says what to run instead.
 * `pooled` (DATABASE_POOL_MODE=transaction): a probe that timed out (PgBouncer holding the login it will retry) is
 * also checked against the server's list of databases, through the pooler's `postgres` database when it serves one.
 */
export async function ensureDatabaseExists(databaseUrl: string, options: { pooled?: boolean } = {}): Promise<boolean> {
  const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await probe.connect();
    return false;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (poolerMissingDatabase(error)) throw new DatabaseMissingError(behindPooler(databaseUrl, `it says: ${message}`));
    if (options.pooled && /timeout/i.test(message ?? '') && (await listedOnServer(databaseUrl)) === false) {
      throw new DatabaseMissingError(
        behindPooler(databaseUrl, 'no connection to it within 5 s, and not on the server'),
      );
    }
    // 3D000 invalid_catalog_name: the server answered, the database is not there. Anything else is not ours to fix.
    if (code !== '3D000') return false;
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

/** Whether the server lists DATABASE_URL's database (asked through its `postgres` database); undefined: no answer. */
async function listedOnServer(databaseUrl: string): Promise<boolean | undefined> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
  try {
    await admin.connect();
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rowCount === 1;
  } catch {
    return undefined;
  } finally {
    await admin.end().catch(() => {});
  }
}

function behindPooler(databaseUrl: string, why: string): string {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const user = url.username ? ` -U ${decodeURIComponent(url.username)}` : '';
  return (
    `the database "${name}" does not exist behind the connection pooler at ${url.hostname}:${url.port || '5432'} ` +
    `(${why}); create it first on the PostgreSQL server behind the pooler: ` +
    `createdb -h <server> -p <port>${user} '${name}'  (or, as a superuser: CREATE DATABASE ${identifier(name)};), ` +
    `and make sure the pooler serves it`
  );
}
