import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { inRepository, whereInRepositories, type RepositoryScope } from '../repositories/repositories.queries.ts';
import { firstInRepository } from '../common/examples.queries.ts';
import type { ReleaseFilters } from './releases.schemas.ts';

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const RELEASE_ORDERING: OrderingSpec = {
  fields: { created_at: 'releases.created_at', published_at: 'releases.published_at' },
  default: '-published_at,-created_at',
  tieBreaker: 'releases.id',
  nullable: ['published_at'],
};

export async function listReleases(db: Db, query: Static<typeof ReleaseFilters>) {
  let q = db
    .selectFrom('releases')
    .select(['releases.name', 'releases.tag_name', 'releases.published_at', 'releases.created_at']);
  if (query.tag_name !== undefined) q = q.where('releases.tag_name', '=', query.tag_name);
  return await whereInRepositories(db, q, 'releases.repository_id', query);
}

/** The columns of the detail (ReleaseDetail). */
const RELEASE_DETAIL = [
  'releases.name',
  'releases.tag_name',
  'releases.description',
  'releases.published_at',
  'releases.created_at',
] as const;

export function getRelease(db: Db, scope: Required<RepositoryScope>, tagName: string) {
  return inRepository(db, 'releases', scope)
    .select(RELEASE_DETAIL)
    .where('releases.tag_name', '=', tagName)
    .executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export const exampleRelease = (db: Db) => firstInRepository(db, 'releases', 'tag_name', 'release_id');
