import { resource } from '../common/resource.ts';
import { inRepositoryDump } from '../common/dumps.ts';
import { repositoryOf } from '../repositories/repositories.schemas.ts';
import { IssueDetail, IssueFilters, IssueItem, IssueParams, IssueStored } from './issues.schemas.ts';
import { ISSUE_LINKS, issueRecords, listIssues } from './issues.queries.ts';

export const issues = resource('issues', 'Issue', {
  description: 'Issues mirrored from GitHub, optionally of one organization, one repository, one state.',
  list: {
    filters: IssueFilters,
    item: IssueItem,
    ordering: issueRecords.ordering,
    groups: issueRecords.groups,
    query: listIssues,
  },
  detail: {
    example: issueRecords.example,
    params: IssueParams,
    response: IssueDetail,
    fetch: (db, params) => issueRecords.get(db, repositoryOf(params), params.issue_id),
  },
  dumps: [
    {
      ...inRepositoryDump('issues', IssueDetail, 'issue_id', 'number', (db) => issueRecords.list(db, {})),
      extra: IssueStored,
      extraGrouped: ISSUE_LINKS,
    },
  ],
});
