import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import {
  exampleInRepository,
  whereInRepositories,
  whereRepository,
  type RepositoryScope,
} from '../repositories/repositories.queries.ts';
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
  const q = db
    .selectFrom('issues')
    .innerJoin('repositories', 'repositories.id', 'issues.repository_id')
    .select(['issues.title', 'issues.state', 'issues.body', 'issues.url', 'issues.created_at', 'issues.updated_at'])
    .where('issues.number', '=', number);
  return whereRepository(q, scope).executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleIssue(db: Db) {
  const row = await exampleInRepository(db, 'issues', 'number');
  return row && { organization_id: row.organization_id, repository_id: row.repository_id, issue_id: row.value };
}
