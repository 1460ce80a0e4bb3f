import { sql } from 'kysely';
import { repositoryRecords } from '../repositories/repository-records.queries.ts';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { GroupedExtra } from '../../../dumps/dump-source.ts';
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
 * the link tables, aggregated for a batch of issues at once (dump-source.ts, extraGrouped); byte order, so that both
 * engines write the same lines. Each name is looked up by its primary key (a lateral subquery the planner keeps as
 * it is): as a join, the planner read every label to merge or hash them, in parallel workers, for a few thousand links.
 */
export const ISSUE_LINKS: Record<string, GroupedExtra> = {
  labels: {
    rows: (inRange) => sql`select il.issue_id as k, array_to_json(array_agg(l.name order by l.name collate "C")) as v
      from issue_labels il cross join lateral (select name from labels where labels.id = il.label_id offset 0) as l
      where ${inRange('il.issue_id')} group by il.issue_id`,
    otherwise: sql`'[]'::json`,
  },
  assignees: {
    rows: (inRange) => sql`select a.issue_id as k, array_to_json(array_agg(m.login order by m.login collate "C")) as v
      from issue_assignees a cross join lateral (select login from members where members.id = a.member_id offset 0) as m
      where ${inRange('a.issue_id')} group by a.issue_id`,
    otherwise: sql`'[]'::json`,
  },
};
