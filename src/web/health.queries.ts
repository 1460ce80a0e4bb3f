// The records of the /health page: every active project with its stored health (docs/health.md), and the daily points
// of their history, as the REST API gives them (projects/{key}/health and /health/history).
import type { Db } from '../db/index.ts';

export function listProjectHealth(db: Db) {
  return db
    .selectFrom('projects')
    .leftJoin('project_health', 'project_health.project_id', 'projects.id')
    .select([
      'projects.key',
      'projects.name',
      'projects.level',
      'project_health.score',
      'project_health.bucket',
      'project_health.coverage',
      'project_health.checks',
      'project_health.computed_at',
    ])
    .where('projects.is_active', '=', true)
    .orderBy('project_health.score', (o) => o.desc().nullsLast())
    .orderBy('projects.key')
    .execute();
}

export function listHealthPoints(db: Db) {
  return db
    .selectFrom('project_health_history')
    .select(['project_key', 'day', 'score'])
    .orderBy('project_key')
    .orderBy('day')
    .execute();
}
