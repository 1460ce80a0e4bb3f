// The issues list's filters beyond the repository scope and the state (issue 47, docs/contribute.md): labels, whether
// assigned, whether commented, the repository's language and a project's repositories. GET /api/v0/contribute/ reads
// the same conditions, so that its count equals the issues list's with the same filters.
import { sql, type SelectQueryBuilder, type SqlBool, type RawBuilder } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { DB } from '../../../db/schema.ts';
import { stripPrefix } from '../common/id-prefix.ts';

export interface IssueExtraFilters {
  label?: string[];
  is_assigned?: boolean;
  has_comments?: boolean;
  language?: string;
  project?: string;
}

/**
 * A label's key: lower case, without whitespace, hyphens and underscores (`Good First Issue` = `good-first-issue`).
 * The same rule as the database's cds_label_key (migration 0017), which the index on labels is built on.
 */
export function labelKey(name: string): string {
  return name.toLowerCase().replace(/[\s_-]+/gu, '');
}

/** The issue (`issues.id`, or `column`) carries one of the labels named (by key). */
export function hasLabel(names: readonly string[], column = 'issues.id'): RawBuilder<SqlBool> {
  const keys = [...new Set(names.map(labelKey))];
  return sql<SqlBool>`${sql.ref(column)} in (select il.issue_id from issue_labels il join labels l on l.id = il.label_id
    where cds_label_key(l.name) in (${sql.join(keys)}))`;
}

/** The repositories of an active project: the lower-case `owner/name` paths it names (projects.repository_paths). */
export function projectRepositoryIds(db: Db, key: string) {
  return db
    .selectFrom('repositories')
    .select('repositories.id')
    .where(
      sql<SqlBool>`(lower(repositories.owner_login), lower(repositories.name)) in (
        select split_part(p.path, '/', 1), split_part(p.path, '/', 2)
        from projects, jsonb_array_elements_text(projects.repository_paths) as p (path)
        where projects.is_active and lower(projects.key) = ${stripPrefix(key, 'www-project-')})`,
    );
}

/** Narrows a query of `issues` (named so in it) by the filters given. */
export function whereIssueFilters<O>(
  db: Db,
  query: SelectQueryBuilder<DB, 'issues', O>,
  filters: IssueExtraFilters,
): SelectQueryBuilder<DB, 'issues', O> {
  let q = query;
  if (filters.label !== undefined && filters.label.length > 0) q = q.where(hasLabel(filters.label));
  if (filters.is_assigned !== undefined) {
    const assigned = sql<SqlBool>`exists (select 1 from issue_assignees a where a.issue_id = issues.id)`;
    q = q.where(filters.is_assigned ? assigned : sql<SqlBool>`not ${assigned}`);
  }
  if (filters.has_comments !== undefined) q = q.where('issues.comments_count', filters.has_comments ? '>' : '=', 0);
  if (filters.language !== undefined) {
    const ids = db
      .selectFrom('repositories')
      .select('repositories.id')
      .where(sql`lower(repositories.language)`, '=', filters.language.toLowerCase());
    q = q.where('issues.repository_id', 'in', ids);
  }
  if (filters.project !== undefined)
    q = q.where('issues.repository_id', 'in', projectRepositoryIds(db, filters.project));
  return q;
}
