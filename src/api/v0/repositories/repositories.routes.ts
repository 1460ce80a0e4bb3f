import { resource } from '../common/resource.ts';
import {
  RepositoryDetail,
  RepositoryFilters,
  RepositoryItem,
  RepositoryParams,
  repositoryOf,
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
});
