import { repositoryRecords } from '../repositories/repository-records.queries.ts';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { IssueDetail, IssueItem, type IssueFilters } from './issues.schemas.ts';
import { whereIssueFilters } from './issue-filters.queries.ts';

/** The list (of a repository scope, by state; newest first) and the detail (by number in one repository). */
export const issueRecords = repositoryRecords('issues', IssueItem, IssueDetail, {
  key: ['number', 'issue_id'],
  equal: ['state'],
  group: ['state'],
  ordering: { by: ['created_at', 'updated_at'], default: '-created_at,-updated_at' },
});

/** The list's rows: the repository scope and the state, then labels, assignees, comments, language, project. */
export async function listIssues(db: Db, query: Static<typeof IssueFilters>) {
  const { label, is_assigned, has_comments, language, project, ...scoped } = query;
  const rows = await issueRecords.list(db, scoped);
  return whereIssueFilters(db, rows, { label, is_assigned, has_comments, language, project });
}
