import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { RepositoryDetail, RepositoryFilters, RepositoryItem, RepositoryParams } from './repositories.schemas.ts';
import { REPOSITORY_ORDERING, getRepository, listRepositories } from './repositories.queries.ts';

export async function repositoryRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/repositories/',
    operationId: 'list_repositories',
    summary: 'List repositories',
    description: 'Repositories mirrored from GitHub, optionally of one organization.',
    tag: 'GitHub',
    filters: RepositoryFilters,
    item: RepositoryItem,
    itemName: 'Repository',
    ordering: REPOSITORY_ORDERING,
    query: listRepositories,
  });

  detailRoute(app, {
    path: '/repositories/:organization_id/:repository_id',
    operationId: 'get_repository',
    summary: 'Get repository',
    tag: 'GitHub',
    params: RepositoryParams,
    response: RepositoryDetail,
    resource: 'Repository',
    fetch: (db, params) =>
      getRepository(db, { organization: params.organization_id, repository: params.repository_id }),
    present: (row) => row,
  });
}
