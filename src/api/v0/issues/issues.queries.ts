import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type ListPage } from '../common/pagination.ts';
import { whereInRepositories, whereRepository, type RepositoryScope } from '../repositories/repositories.queries.ts';
import type { IssueFilters } from './issues.schemas.ts';

export async function listIssues(db: Db, query: Static<typeof IssueFilters>, order: OrderTerm[], page: ListPage) {
  let q = db
    .selectFrom('issues')
    .select(['issues.title', 'issues.state', 'issues.url', 'issues.created_at', 'issues.updated_at']);
  if (query.state !== undefined) q = q.where('issues.state', '=', query.state);
  return fetchPage(db, await whereInRepositories(db, q, 'issues.repository_id', query), order, page);
}

export function getIssue(db: Db, scope: Required<RepositoryScope>, number: number) {
  const q = db
    .selectFrom('issues')
    .innerJoin('repositories', 'repositories.id', 'issues.repository_id')
    .select(['issues.title', 'issues.state', 'issues.body', 'issues.url', 'issues.created_at', 'issues.updated_at'])
    .where('issues.number', '=', number);
  return whereRepository(q, scope).executeTakeFirst();
}
