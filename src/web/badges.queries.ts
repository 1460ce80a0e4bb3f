import type { Db } from '../db/index.ts';

/** Every active project's key and stored health (none yet: null), for the badges. */
export function listHealthBadges(db: Db) {
  return db
    .selectFrom('projects')
    .leftJoin('project_health', 'project_health.project_id', 'projects.id')
    .where('projects.is_active', '=', true)
    .select(['projects.key', 'project_health.score', 'project_health.bucket'])
    .execute();
}
