import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { inRepository, whereInRepositories, type RepositoryScope } from '../repositories/repositories.queries.ts';
import { firstInRepository } from '../common/examples.queries.ts';
import type { MilestoneFilters } from './milestones.schemas.ts';

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const MILESTONE_ORDERING: OrderingSpec = {
  fields: { created_at: 'milestones.created_at', updated_at: 'milestones.updated_at' },
  default: '-created_at,-updated_at',
  tieBreaker: 'milestones.id',
};

export async function listMilestones(db: Db, query: Static<typeof MilestoneFilters>) {
  let q = db
    .selectFrom('milestones')
    .select([
      'milestones.number',
      'milestones.title',
      'milestones.state',
      'milestones.url',
      'milestones.created_at',
      'milestones.updated_at',
    ]);
  if (query.state !== undefined) q = q.where('milestones.state', '=', query.state);
  return await whereInRepositories(db, q, 'milestones.repository_id', query);
}

/** The columns of the detail (MilestoneDetail). */
const MILESTONE_DETAIL = [
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
] as const;

export function getMilestone(db: Db, scope: Required<RepositoryScope>, number: number) {
  return inRepository(db, 'milestones', scope)
    .select(MILESTONE_DETAIL)
    .where('milestones.number', '=', number)
    .executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export const exampleMilestone = (db: Db) => firstInRepository(db, 'milestones', 'number', 'milestone_id');
