import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { inRepository, whereInRepositories, type RepositoryScope } from '../repositories/repositories.queries.ts';
import { firstInRepository } from '../common/examples.queries.ts';
import type { IssueFilters } from './issues.schemas.ts';

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const ISSUE_ORDERING: OrderingSpec = {
  fields: { created_at: 'issues.created_at', updated_at: 'issues.updated_at' },
  default: '-created_at,-updated_at',
  tieBreaker: 'issues.id',
};

export async function listIssues(db: Db, query: Static<typeof IssueFilters>) {
  let q = db
    .selectFrom('issues')
    .select(['issues.title', 'issues.state', 'issues.url', 'issues.created_at', 'issues.updated_at']);
  if (query.state !== undefined) q = q.where('issues.state', '=', query.state);
  return await whereInRepositories(db, q, 'issues.repository_id', query);
}

export function getIssue(db: Db, scope: Required<RepositoryScope>, number: number) {
  return inRepository(db, 'issues', scope)
    .select(['issues.title', 'issues.state', 'issues.body', 'issues.url', 'issues.created_at', 'issues.updated_at'])
    .where('issues.number', '=', number)
    .executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export const exampleIssue = (db: Db) => firstInRepository(db, 'issues', 'number', 'issue_id');
