import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StringFilter } from '../common/schemas.ts';
import { RepositoryPath, RepositoryScopeFilters } from '../repositories/repositories.schemas.ts';

export const ReleaseItem = Type.Object(
  {
    name: Type.String(),
    tag_name: Type.String(),
    published_at: Nullable(DateTime('Null when unpublished.')),
    created_at: DateTime(),
  },
  { title: 'ReleaseListItem' },
);

export const ReleaseDetail = Type.Object(
  {
    name: Type.String(),
    tag_name: Type.String(),
    description: Type.String({ description: 'Release notes.' }),
    published_at: Nullable(DateTime('Null when unpublished.')),
    created_at: DateTime(),
  },
  { title: 'Release' },
);

export const ReleaseFilters = Type.Object({
  ...RepositoryScopeFilters,
  tag_name: StringFilter('Tag name, exact and case-sensitive.'),
});

export const ReleaseParams = Type.Object({
  ...RepositoryPath,
  release_id: Type.String({
    minLength: 1,
    maxLength: 500,
    description: 'Tag name, exact and case-sensitive. A `/` inside the tag must be sent encoded, as `%2F`.',
  }),
});
