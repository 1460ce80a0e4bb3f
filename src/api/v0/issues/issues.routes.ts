import { resource } from '../common/resource.ts';
import { repositoryOf } from '../repositories/repositories.schemas.ts';
import { IssueDetail, IssueFilters, IssueItem, IssueParams } from './issues.schemas.ts';
import { ISSUE_ORDERING, getIssue, listIssues, exampleIssue } from './issues.queries.ts';

export const issues = resource('issues', 'Issue', {
  description: 'Issues mirrored from GitHub, optionally of one organization, one repository, one state.',
  list: { filters: IssueFilters, item: IssueItem, ordering: ISSUE_ORDERING, query: listIssues },
  detail: {
    example: exampleIssue,
    params: IssueParams,
    response: IssueDetail,
    fetch: (db, params) => getIssue(db, repositoryOf(params), params.issue_id),
  },
});
