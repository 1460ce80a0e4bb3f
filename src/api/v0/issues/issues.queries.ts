import { sql } from 'kysely';
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

/**
 * An issue's labels (their names) and assignees (their logins) as its dump's `extra` carries them (IssueStored), from
 * the link tables; byte order, so that both engines write the same lines.
 */
export const ISSUE_LINKS = {
  labels: sql`coalesce((select jsonb_agg(l.name order by l.name collate "C") from issue_labels il
    join labels l on l.id = il.label_id where il.issue_id = issues.id), '[]'::jsonb)`,
  assignees: sql`coalesce((select jsonb_agg(m.login order by m.login collate "C") from issue_assignees a
    join members m on m.id = a.member_id where a.issue_id = issues.id), '[]'::jsonb)`,
};
