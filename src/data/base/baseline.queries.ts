// The baseline of the change log (migration 0014, docs/changes.md): what a first import writes into an empty database
// is no change. A consumer starts from the dumps (their manifest names the last change they include), then follows the
// changes after it: a log holding the baseline's million "created" would double every record.
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import { bumpMetaCounter } from '../../db/meta.queries.ts';

/** Counted in app_meta: the edge's purge (src/edge/) purges everything once per baseline, which names no record. */
export const BASELINES = 'baselines';

/** The calling transaction records no change (the setting is local to it). */
export async function recordNoChanges(db: Db): Promise<void> {
  await sql`SELECT set_config('cds.changes', 'off', true)`.execute(db);
  await bumpMetaCounter(db, BASELINES);
}
