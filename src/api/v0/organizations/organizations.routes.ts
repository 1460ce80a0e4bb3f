import { resource } from '../common/resource.ts';
import { loginDump } from '../common/dumps.ts';
import {
  OrganizationDetail,
  OrganizationFilters,
  OrganizationItem,
  OrganizationParams,
  OrganizationStored,
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
      ...loginDump('organizations', OrganizationDetail, 'organization_id', (db) => listOrganizations(db, {})),
      extra: OrganizationStored,
    },
  ],
});
