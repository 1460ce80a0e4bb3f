import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type ListPage } from '../common/pagination.ts';
import { whereInRepositories, whereRepository, type RepositoryScope } from '../repositories/repositories.queries.ts';
import type { MilestoneFilters } from './milestones.schemas.ts';

export async function listMilestones(db: Db, query: Static<typeof MilestoneFilters>, order: OrderTerm[], page: ListPage) {
  let q = db
    .selectFrom('milestones')
    .select(['milestones.number', 'milestones.title', 'milestones.state', 'milestones.url', 'milestones.created_at', 'milestones.updated_at']);
  if (query.state !== undefined) q = q.where('milestones.state', '=', query.state);
  return fetchPage(db, await whereInRepositories(db, q, 'milestones.repository_id', query), order, page);
}

export function getMilestone(db: Db, scope: Required<RepositoryScope>, number: number) {
  const q = db
    .selectFrom('milestones')
    .innerJoin('repositories', 'repositories.id', 'milestones.repository_id')
    .select([
      'milestones.number',
      'milestones.title',
      'milestones.state',
      'milestones.body',
      'milestones.url',
      'milestones.open_issues_count',
      'milestones.closed_issues_count',
      'milestones.due_on',
      'milestones.created_at',
      'milestones.updated_at',
    ])
    .where('milestones.number', '=', number);
  return whereRepository(q, scope).executeTakeFirst();
}
