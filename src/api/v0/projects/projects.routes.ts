import type { Static } from '@sinclair/typebox';
import { detailOperation, listOperation, resource, type Resource } from '../common/resource.ts';
import { keyedDump } from '../common/dumps.ts';
import { ProjectDetail, ProjectFilters, ProjectItem, ProjectParams, ProjectStored } from './projects.schemas.ts';
import {
  PROJECT_GROUPS,
  PROJECT_HEALTH_EXTRA,
  PROJECT_ORDERING,
  getProject,
  listProjects,
  exampleProject,
} from './projects.queries.ts';
import { HealthHistoryFilters, HealthPoint, ProjectHealth } from './project-health.schemas.ts';
import {
  exampleHealthHistory,
  exampleProjectHealth,
  getProjectHealth,
  HEALTH_HISTORY_ORDERING,
  listHealthHistory,
} from './project-health.queries.ts';
import { healthHistoryDump } from './project-health.dumps.ts';

const project = resource('projects', 'Project', {
  description: 'Active projects.',
  list: {
    filters: ProjectFilters,
    item: ProjectItem,
    ordering: PROJECT_ORDERING,
    groups: PROJECT_GROUPS,
    query: listProjects,
  },
  detail: {
    example: exampleProject,
    params: ProjectParams,
    response: ProjectDetail,
    fetch: (db, params) => getProject(db, params.project_id),
    present: ({ id: _id, ...project }) => project,
  },
  dumps: [
    {
      ...keyedDump('projects', ProjectDetail, 'project_id', (db) => listProjects(db, {}), 'project_id'),
      extra: ProjectStored,
      extraComputed: PROJECT_HEALTH_EXTRA,
    },
    healthHistoryDump,
  ],
});

// Health (issue 47, docs/health.md): a sub-resource of the project, computed after each import and sync.
export const projects: Resource = {
  ...project,
  operations: [
    ...project.operations,
    {
      ...detailOperation({
        path: '/projects/:project_id/health',
        operationId: 'get_project_health',
        summary: 'Get project health',
        description:
          "The project's health score (0–100, formula `nest-compatible-1`: the reference's 17 checks and thresholds per " +
          'level with its known flaws fixed), every check with its value, threshold and weight, and unscored metrics. ' +
          'A check whose input is unknown has `pass: null` and is left out; the score is scaled over the known weights ' +
          '(`coverage`).',
        params: ProjectParams,
        response: ProjectHealth,
        resource: 'ProjectHealth',
        fetch: (db, params) => getProjectHealth(db, params.project_id),
        // The stored checks and metrics are what data/health/ wrote: the shapes of the schema.
        present: (row) => row as Static<typeof ProjectHealth>,
      }),
      example: exampleProjectHealth,
    },
    listOperation(
      {
        path: '/projects/:project_id/health/history',
        operationId: 'list_project_health_history',
        summary: 'List project health history',
        description:
          'One point per UTC day, oldest first, kept by each import and sync; append-only (a past day is never ' +
          'rewritten). `since` and `until` (`YYYY-MM-DD`) bound the days, both included.',
        params: ProjectParams,
        filters: HealthHistoryFilters,
        item: HealthPoint,
        itemName: 'HealthPoint',
        ordering: HEALTH_HISTORY_ORDERING,
        query: (db, filters, params) => listHealthHistory(db, params.project_id, filters),
      },
      exampleHealthHistory,
    ),
  ],
};
