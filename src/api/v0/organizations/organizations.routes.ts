import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import {
  OrganizationDetail,
  OrganizationFilters,
  OrganizationItem,
  OrganizationParams,
} from './organizations.schemas.ts';
import { ORGANIZATION_ORDERING, getOrganization, listOrganizations } from './organizations.queries.ts';

export async function organizationRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/organizations/',
    operationId: 'list_organizations',
    summary: 'List organizations',
    description: 'GitHub organizations mirrored by the service, once the GitHub sync has their profile.',
    tag: 'GitHub',
    filters: OrganizationFilters,
    item: OrganizationItem,
    itemName: 'Organization',
    ordering: ORGANIZATION_ORDERING,
    query: listOrganizations,
  });

  detailRoute(app, {
    path: '/organizations/:organization_id',
    operationId: 'get_organization',
    summary: 'Get organization',
    tag: 'GitHub',
    params: OrganizationParams,
    response: OrganizationDetail,
    resource: 'Organization',
    fetch: (db, params) => getOrganization(db, params.organization_id),
    present: (row) => row,
  });
}
