import { repositoryRecords } from '../repositories/repository-records.queries.ts';
import { ReleaseDetail, ReleaseItem } from './releases.schemas.ts';

/** The list (of a repository scope, by tag; unpublished, then newest first) and the detail (by tag in one repository). */
export const releaseRecords = repositoryRecords('releases', ReleaseItem, ReleaseDetail, {
  key: ['tag_name', 'release_id'],
  equal: ['tag_name'],
  ordering: { by: ['created_at', 'published_at'], default: '-published_at,-created_at', nullable: ['published_at'] },
});
