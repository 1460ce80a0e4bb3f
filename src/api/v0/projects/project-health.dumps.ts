// The dump of every project's health history (issue 47): one line per point, named by its project's key. Only active
// projects' points, as the history list serves them.
import type { DumpSource } from '../../../dumps/dump-source.ts';
import { fieldsOf, param } from '../common/dumps.ts';
import { HealthPoint } from './project-health.schemas.ts';

export const healthHistoryDump: DumpSource = {
  resource: 'project-health-history',
  record: HealthPoint,
  params: ['project_id'],
  key: 'project_health_history.id',
  rows: (db) =>
    db
      .selectFrom('project_health_history')
      .innerJoin('projects', 'projects.key', 'project_health_history.project_key')
      .where('projects.is_active', '=', true)
      .select([...fieldsOf('project_health_history', HealthPoint), param('project_id', 'projects.key')]),
};
