// Rebuilding the snapshots on their own (`cds snapshots rebuild`, and after a GitHub sync, whose units
// commit one by one): under the write lock, with a new data version when a snapshot changed.
import type { Db } from '../../db/index.ts';
import { bumpDataVersion, readDataVersion } from '../../announcements/counters.queries.ts';
import { lockWrites } from '../base/write-lock.queries.ts';
import { rebuildSnapshots, snapshotsChanged, type RebuildResult } from './monthly-snapshots.queries.ts';

/** Where "now" comes from: the completed months are those before the month of `now()`. */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();

export interface SnapshotsReport extends RebuildResult {
  changed: boolean;
  dataVersion: number;
}

export function refreshSnapshots(db: Db, clock: Clock = systemClock): Promise<SnapshotsReport> {
  return db.transaction().execute(async (trx) => {
    await lockWrites(trx);
    const result = await rebuildSnapshots(trx, clock());
    const changed = snapshotsChanged(result);
    const dataVersion = changed ? await bumpDataVersion(trx) : await readDataVersion(trx);
    return { ...result, changed, dataVersion };
  });
}
