import { resource } from '../common/resource.ts';
import { fieldsOf, param } from '../common/dumps.ts';
import type { ListQuery } from '../common/pagination.ts';
import {
  OrganizationDetail,
  OrganizationFilters,
  OrganizationItem,
  OrganizationParams,
} from './organizations.schemas.ts';
import {
  ORGANIZATION_GROUPS,
  ORGANIZATION_ORDERING,
  getOrganization,
  listOrganizations,
  exampleOrganization,
} from './organizations.queries.ts';

export const organizations = resource('organizations', 'Organization', {
  description: 'GitHub organizations mirrored by the service, once the GitHub sync has their profile.',
  list: {
    filters: OrganizationFilters,
    item: OrganizationItem,
    ordering: ORGANIZATION_ORDERING,
    groups: ORGANIZATION_GROUPS,
    query: listOrganizations,
  },
  detail: {
    example: exampleOrganization,
    params: OrganizationParams,
    response: OrganizationDetail,
    fetch: (db, params) => getOrganization(db, params.organization_id),
  },
  dumps: [
    {
      resource: 'organizations',
      record: OrganizationDetail,
      params: ['organization_id'],
      key: 'organizations.id',
      rows: (db) =>
        (listOrganizations(db, {}) as ListQuery)
          .clearSelect()
          .select([...fieldsOf('organizations', OrganizationDetail), param('organization_id', 'organizations.login')]),
    },
  ],
});
