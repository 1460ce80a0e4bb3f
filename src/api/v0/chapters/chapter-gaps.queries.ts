import type { Db } from '../../../db/index.ts';

/** The active chapters that have coordinates (the chapters list's own rule), where the gaps are measured from. */
export async function listPlacedChapters(db: Db) {
  const rows = await db
    .selectFrom('chapters')
    .select(['key', 'latitude', 'longitude'])
    .where('is_active', '=', true)
    .where('latitude', 'is not', null)
    .where('longitude', 'is not', null)
    .orderBy('key')
    .execute();
  return rows as { key: string; latitude: number; longitude: number }[];
}
