// The database's side of "another instance changed something": two counters in app_meta that every
// instance polls. The data version moves with every import or sync that changed data (in its
// transaction); the revocation counter with every key revocation (revocations.queries.ts).
import type { Db } from '../db/index.ts';
import { bumpMetaCounter, readMetaCounter } from '../db/meta.queries.ts';

const DATA_VERSION = 'data_version';
const REVOCATIONS = 'keys_revoked';

/** A counter that changes whenever stored data changes; response caches key on it. */
export function bumpDataVersion(db: Db): Promise<number> {
  return bumpMetaCounter(db, DATA_VERSION);
}

export function readDataVersion(db: Db): Promise<number> {
  return readMetaCounter(db, DATA_VERSION);
}

export function bumpRevocations(db: Db): Promise<number> {
  return bumpMetaCounter(db, REVOCATIONS);
}

export function readRevocations(db: Db): Promise<number> {
  return readMetaCounter(db, REVOCATIONS);
}
