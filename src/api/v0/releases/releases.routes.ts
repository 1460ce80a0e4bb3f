import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { ReleaseDetail, ReleaseFilters, ReleaseItem, ReleaseParams } from './releases.schemas.ts';
import { RELEASE_ORDERING, getRelease, listReleases } from './releases.queries.ts';

export async function releaseRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/releases/',
    operationId: 'list_releases',
    summary: 'List releases',
    description:
      'Releases mirrored from GitHub, optionally of one organization, one repository, one tag. ' +
      'Unpublished releases (null `published_at`) come first in the default, descending order.',
    tag: 'GitHub',
    filters: ReleaseFilters,
    item: ReleaseItem,
    itemName: 'Release',
    ordering: RELEASE_ORDERING,
    query: listReleases,
  });

  detailRoute(app, {
    path: '/releases/:organization_id/:repository_id/:release_id',
    operationId: 'get_release',
    summary: 'Get release',
    description: 'The release is named by its tag; a `/` in the tag must be sent as `%2F`.',
    tag: 'GitHub',
    params: ReleaseParams,
    response: ReleaseDetail,
    resource: 'Release',
    fetch: (db, params) =>
      getRelease(db, { organization: params.organization_id, repository: params.repository_id }, params.release_id),
    present: (row) => row,
  });
}
