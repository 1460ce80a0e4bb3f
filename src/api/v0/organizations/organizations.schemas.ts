import { Type } from '@sinclair/typebox';
import { DateTime, StringFilter } from '../common/schemas.ts';

// GitHub's dates of the organization. Organizations whose profile the GitHub sync has not fetched yet
// have none and are not published (docs/decisions.md), so these are never null.
const Dates = {
  created_at: DateTime(),
  updated_at: DateTime(),
};

export const OrganizationItem = Type.Object(
  {
    login: Type.String({ description: 'GitHub login.' }),
    name: Type.String(),
    ...Dates,
  },
  { title: 'OrganizationListItem' },
);

export const OrganizationDetail = Type.Object(
  {
    login: Type.String({ description: 'GitHub login.' }),
    name: Type.String(),
    company: Type.String(),
    location: Type.String(),
    ...Dates,
  },
  { title: 'Organization' },
);

export const OrganizationFilters = Type.Object({
  location: StringFilter('Location, case-insensitive exact match.'),
});

export const OrganizationParams = Type.Object({
  organization_id: Type.String({ maxLength: 200, description: 'Organization login, case-insensitive.' }),
});

/** What the dump carries besides the detail (common/dumps.ts): the search reads the description. */
export const OrganizationStored = Type.Object({ description: Type.String() });
