import { resource } from '../common/resource.ts';
import { inRepositoryDump } from '../common/dumps.ts';
import { repositoryOf } from '../repositories/repositories.schemas.ts';
import { ReleaseDetail, ReleaseFilters, ReleaseItem, ReleaseParams } from './releases.schemas.ts';
import { releaseRecords } from './releases.queries.ts';

export const releases = resource('releases', 'Release', {
  description:
    'Releases mirrored from GitHub, optionally of one organization, one repository, one tag. ' +
    'Unpublished releases (null `published_at`) come first in the default, descending order.',
  list: {
    filters: ReleaseFilters,
    item: ReleaseItem,
    ordering: releaseRecords.ordering,
    groups: releaseRecords.groups,
    query: releaseRecords.list,
  },
  detail: {
    example: releaseRecords.example,
    description: 'The release is named by its tag; a `/` in the tag must be sent as `%2F`.',
    params: ReleaseParams,
    response: ReleaseDetail,
    fetch: (db, params) => releaseRecords.get(db, repositoryOf(params), params.release_id),
  },
  dumps: [inRepositoryDump('releases', ReleaseDetail, 'release_id', 'tag_name', (db) => releaseRecords.list(db, {}))],
});
