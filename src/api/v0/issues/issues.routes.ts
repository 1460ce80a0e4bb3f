import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { IssueDetail, IssueFilters, IssueItem, IssueParams } from './issues.schemas.ts';
import { ISSUE_ORDERING, getIssue, listIssues } from './issues.queries.ts';

export async function issueRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/issues/',
    operationId: 'list_issues',
    summary: 'List issues',
    description: 'Issues mirrored from GitHub, optionally of one organization, one repository, one state.',
    tag: 'GitHub',
    filters: IssueFilters,
    item: IssueItem,
    itemName: 'Issue',
    ordering: ISSUE_ORDERING,
    query: listIssues,
  });

  detailRoute(app, {
    path: '/issues/:organization_id/:repository_id/:issue_id',
    operationId: 'get_issue',
    summary: 'Get issue',
    tag: 'GitHub',
    params: IssueParams,
    response: IssueDetail,
    resource: 'Issue',
    fetch: (db, params) =>
      getIssue(db, { organization: params.organization_id, repository: params.repository_id }, params.issue_id),
    present: (row) => row,
  });
}
