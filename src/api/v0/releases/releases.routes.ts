import { resource } from '../common/resource.ts';
import { repositoryOf } from '../repositories/repositories.schemas.ts';
import { ReleaseDetail, ReleaseFilters, ReleaseItem, ReleaseParams } from './releases.schemas.ts';
import { RELEASE_ORDERING, getRelease, listReleases, exampleRelease } from './releases.queries.ts';

export const releases = resource('releases', 'Release', {
  description:
    'Releases mirrored from GitHub, optionally of one organization, one repository, one tag. ' +
    'Unpublished releases (null `published_at`) come first in the default, descending order.',
  list: { filters: ReleaseFilters, item: ReleaseItem, ordering: RELEASE_ORDERING, query: listReleases },
  detail: {
    example: exampleRelease,
    description: 'The release is named by its tag; a `/` in the tag must be sent as `%2F`.',
    params: ReleaseParams,
    response: ReleaseDetail,
    fetch: (db, params) => getRelease(db, repositoryOf(params), params.release_id),
  },
});
