import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StringFilter } from '../common/schemas.ts';

// Some recorded GitHub organizations carry no dates, so both are nullable.
const Dates = {
  created_at: Nullable(DateTime()),
  updated_at: Nullable(DateTime()),
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
