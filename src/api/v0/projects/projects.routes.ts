import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { ProjectDetail, ProjectFilters, ProjectItem, ProjectParams } from './projects.schemas.ts';
import { PROJECT_ORDERING, getProject, listProjects } from './projects.queries.ts';

export async function projectRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/projects/',
    operationId: 'list_projects',
    summary: 'List projects',
    description: 'Active projects.',
    tag: 'Community',
    filters: ProjectFilters,
    item: ProjectItem,
    itemName: 'Project',
    ordering: PROJECT_ORDERING,
    query: listProjects,
  });

  detailRoute(app, {
    path: '/projects/:project_id',
    operationId: 'get_project',
    summary: 'Get project',
    tag: 'Community',
    params: ProjectParams,
    response: ProjectDetail,
    resource: 'Project',
    fetch: (db, params) => getProject(db, params.project_id),
    present: ({ id: _id, ...project }) => project,
  });
}
