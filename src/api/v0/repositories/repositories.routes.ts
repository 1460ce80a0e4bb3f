import { resource } from '../common/resource.ts';
import { fieldsOf, REPOSITORY_PARAMS } from '../common/dumps.ts';
import type { ListQuery } from '../common/pagination.ts';
import {
  RepositoryDetail,
  RepositoryFilters,
  RepositoryItem,
  RepositoryParams,
  repositoryOf,
  RepositoryStored,
} from './repositories.schemas.ts';
import {
  REPOSITORY_GROUPS,
  REPOSITORY_ORDERING,
  getRepository,
  listRepositories,
  exampleRepository,
} from './repositories.queries.ts';

export const repositories = resource('repositories', 'Repository', {
  description: 'Repositories mirrored from GitHub, optionally of one organization.',
  list: {
    filters: RepositoryFilters,
    item: RepositoryItem,
    ordering: REPOSITORY_ORDERING,
    groups: REPOSITORY_GROUPS,
    query: listRepositories,
  },
  detail: {
    example: exampleRepository,
    params: RepositoryParams,
    response: RepositoryDetail,
    fetch: (db, params) => getRepository(db, repositoryOf(params)),
  },
  dumps: [
    {
      resource: 'repositories',
      record: RepositoryDetail,
      params: ['organization_id', 'repository_id'],
      key: 'repositories.id',
      extra: RepositoryStored,
      rows: (db) =>
        (listRepositories(db, {}) as ListQuery)
          .clearSelect()
          .select([...fieldsOf('repositories', RepositoryDetail), ...REPOSITORY_PARAMS]),
    },
  ],
});
