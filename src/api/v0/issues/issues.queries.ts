import { repositoryRecords } from '../repositories/repository-records.queries.ts';
import { IssueDetail, IssueItem } from './issues.schemas.ts';

/** The list (of a repository scope, by state; newest first) and the detail (by number in one repository). */
export const issueRecords = repositoryRecords('issues', IssueItem, IssueDetail, {
  key: ['number', 'issue_id'],
  equal: ['state'],
  group: ['state'],
  ordering: { by: ['created_at', 'updated_at'], default: '-created_at,-updated_at' },
});
