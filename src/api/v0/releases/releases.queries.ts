import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type ListPage } from '../common/pagination.ts';
import { whereInRepositories, whereRepository, type RepositoryScope } from '../repositories/repositories.queries.ts';
import type { ReleaseFilters } from './releases.schemas.ts';

export async function listReleases(db: Db, query: Static<typeof ReleaseFilters>, order: OrderTerm[], page: ListPage) {
  let q = db
    .selectFrom('releases')
    .select(['releases.name', 'releases.tag_name', 'releases.published_at', 'releases.created_at']);
  if (query.tag_name !== undefined) q = q.where('releases.tag_name', '=', query.tag_name);
  return fetchPage(db, await whereInRepositories(db, q, 'releases.repository_id', query), order, page);
}

export function getRelease(db: Db, scope: Required<RepositoryScope>, tagName: string) {
  const q = db
    .selectFrom('releases')
    .innerJoin('repositories', 'repositories.id', 'releases.repository_id')
    .select(['releases.name', 'releases.tag_name', 'releases.description', 'releases.published_at', 'releases.created_at'])
    .where('releases.tag_name', '=', tagName);
  return whereRepository(q, scope).executeTakeFirst();
}
