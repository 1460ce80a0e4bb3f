// The database's side of "another instance changed something": two counters in app_meta that every
// instance polls. The data version moves with every import or sync that changed data (in its
// transaction); the revocation counter with every key revocation (revocations.queries.ts).
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { bumpMetaCounter, readMetaCounter } from '../db/meta.queries.ts';
import type { WalPosition } from '../db/server/replicas.ts';

const DATA_VERSION = 'data_version';
const REVOCATIONS = 'keys_revoked';

/**
 * A counter that changes whenever stored data changes; response caches key on it. Once per transaction (migration
 * 0014): the change log's triggers bump it with the first change they record, and a second bump in the same
 * transaction returns the first's version, which every change of the transaction carries.
 */
export async function bumpDataVersion(db: Db): Promise<number> {
  const { rows } = await sql<{ version: string }>`SELECT cds_bump_data_version() AS version`.execute(db);
  return Number(rows[0]!.version);
}

export function readDataVersion(db: Db): Promise<number> {
  return readMetaCounter(db, DATA_VERSION);
}

/**
 * With read replicas: the data version and the primary's WAL insert position, in one statement, so that the position is
 * at or past the commit of the version read (db/server/replicas.ts). On the primary only (a standby has no insert position).
 */
export async function readDataVersionAt(db: Db): Promise<{ version: number; wal: WalPosition }> {
  const { rows } = await sql<{ version: string | null; position: string; block: string; segment: string }>`
    SELECT (SELECT value #>> '{}' FROM app_meta WHERE key = ${DATA_VERSION}) AS version,
           pg_current_wal_insert_lsn()::text AS position,
           current_setting('wal_block_size') AS block,
           (SELECT setting FROM pg_settings WHERE name = 'wal_segment_size') AS segment`.execute(db);
  const row = rows[0]!;
  return {
    version: row.version === null ? 0 : Number(row.version),
    wal: { position: row.position, blockSize: Number(row.block), segmentSize: Number(row.segment) },
  };
}

export function bumpRevocations(db: Db): Promise<number> {
  return bumpMetaCounter(db, REVOCATIONS);
}

export function readRevocations(db: Db): Promise<number> {
  return readMetaCounter(db, REVOCATIONS);
}
