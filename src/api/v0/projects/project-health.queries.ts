// A project's stored health (data/health/ computes it after each import and sync): one row, and its daily points.
import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { NotFoundError, invalidParam } from '../../../errors.ts';
import { stripPrefix } from '../common/id-prefix.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { columnsOf } from '../common/schemas.ts';
import { HealthPoint, type HealthHistoryFilters } from './project-health.schemas.ts';

/** The active project a path names (the key, with or without `www-project-`), as the project's detail finds it. */
function activeProject(db: Db, projectId: string) {
  return db
    .selectFrom('projects')
    .where('is_active', '=', true)
    .where(sql`lower(key)`, '=', stripPrefix(projectId, 'www-project-'));
}

export async function getProjectHealth(db: Db, projectId: string) {
  const row = await activeProject(db, projectId)
    .innerJoin('project_health', 'project_health.project_id', 'projects.id')
    .select([
      'projects.key',
      'projects.level',
      'project_health.score',
      'project_health.bucket',
      'project_health.formula',
      'project_health.computed_at',
      'project_health.data_version',
      'project_health.coverage',
      'project_health.checks',
      'project_health.metrics',
    ])
    .executeTakeFirst();
  if (!row) {
    const project = await activeProject(db, projectId).select('key').executeTakeFirst();
    // Not computed yet (a database migrated since its last import or sync): said apart from an unknown project.
    throw new NotFoundError(project ? 'Project health' : 'Project');
  }
  const { key, data_version, ...rest } = row;
  return { project: key, ...rest, data_version: Number(data_version) };
}

export const HEALTH_HISTORY_ORDERING: OrderingSpec = {
  fields: { day: 'project_health_history.day' },
  default: 'day',
  tieBreaker: 'project_health_history.day',
};

/** The points of an active project, `since` to `until` included; an unknown project is a 404. */
export async function listHealthHistory(db: Db, projectId: string, filters: Static<typeof HealthHistoryFilters>) {
  if (filters.since !== undefined && filters.until !== undefined && filters.since > filters.until)
    throw invalidParam('query', 'until', 'must not be before `since`');
  const project = await activeProject(db, projectId).select('key').executeTakeFirst();
  if (!project) throw new NotFoundError('Project');
  let q = db
    .selectFrom('project_health_history')
    .select(columnsOf('project_health_history', HealthPoint))
    .where('project_key', '=', project.key);
  if (filters.since !== undefined) q = q.where('day', '>=', filters.since);
  if (filters.until !== undefined) q = q.where('day', '<=', filters.until);
  return q;
}

/** The path parameters of a project with a computed health (the conformance test requests it). */
export async function exampleProjectHealth(db: Db) {
  const row = await db
    .selectFrom('projects')
    .innerJoin('project_health', 'project_health.project_id', 'projects.id')
    .where('projects.is_active', '=', true)
    .select('projects.key')
    .orderBy('projects.key')
    .executeTakeFirst();
  return row === undefined ? undefined : { project_id: row.key };
}

/** A project with at least one point of history. */
export async function exampleHealthHistory(db: Db) {
  const row = await db
    .selectFrom('projects')
    .innerJoin('project_health_history', 'project_health_history.project_key', 'projects.key')
    .where('projects.is_active', '=', true)
    .select('projects.key')
    .orderBy('projects.key')
    .executeTakeFirst();
  return row === undefined ? undefined : { project_id: row.key };
}
