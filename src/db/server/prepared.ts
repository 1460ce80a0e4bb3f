// Named prepared statements for the reads of a PostgreSQL server's serving pools (DATABASE_PREPARED_STATEMENTS,
// issue 32). node-postgres prepares a statement on a connection when the query carries a name: the server parses and
// plans its text once per connection, and each later execution sends only the name and the values (and PostgreSQL may
// keep a generic plan after five executions). A list page's statement spent about half its server time planning.
// - Only reads (statements beginning with SELECT or WITH): the list, count, detail and search queries. Writes are rare
//   on the serving pools and run in transactions of their own.
// - The name is a digest of the text, so equal texts share one name and a name never means two texts.
// - At most MAX_PER_CONNECTION names per connection (a statement with an IN list of any length is a new text for each
//   length): past them, the statement is sent unnamed, as before.
// - A named statement whose result columns changed under it (another instance migrated the table while this one ran:
//   "cached plan must not change result type", 0A000) is sent again unnamed, and from then on unnamed on that
//   connection, outside a transaction (inside one, the error has already ended it and is passed on).
// - Off behind a pooler in transaction mode (DATABASE_POOL_MODE=transaction): a named statement belongs to one server
//   session, which the next transaction may not get (Debian's PgBouncer 1.18 cannot carry it across).
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Query } from './pool-mode.ts';
import { memoize } from '../../memo.ts';

export const MAX_PER_CONNECTION = 500;

const READ = /^\s*(select|with)\b/i;
const CHANGED_RESULT = '0A000';

/** The names of texts seen, process-wide (a digest costs more than a lookup); bounded like the connections' names. */
const nameOf = memoize(4 * MAX_PER_CONNECTION, (text) => `cds_${createHash('sha1').update(text).digest('base64url')}`);

/** One connection's query function that names its reads. `inTransaction` says whether the connection is in one. */
export function namingReads(client: pg.PoolClient, inTransaction: () => boolean): Query {
  const named = new Set<string>();
  const unnamed = new Set<string>();
  return async (text, parameters) => {
    const values = parameters as unknown[];
    if (!READ.test(text) || unnamed.has(text)) return client.query(text, values);
    const name = nameOf(text);
    if (!named.has(name)) {
      if (named.size >= MAX_PER_CONNECTION) return client.query(text, values);
      named.add(name);
    }
    try {
      return await client.query({ name, text, values });
    } catch (error) {
      if ((error as { code?: string }).code !== CHANGED_RESULT || inTransaction()) throw error;
      unnamed.add(text);
      return client.query(text, values);
    }
  };
}
