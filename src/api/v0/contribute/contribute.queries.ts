import { sql, type SqlBool } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { stripPrefix } from '../common/id-prefix.ts';
import { hasLabel } from '../issues/issue-filters.queries.ts';
import { BEGINNER_LABELS } from './contribute.labels.ts';
import type { ContributeFilters } from './contribute.schemas.ts';

/**
 * The order of the projects among themselves, the second term of the list's ordering (`project_rank`, 1 = first).
 * THE SEAM for the project's health (issue 47, item 2): by the key until the health scores are mirrored; then by the
 * score, highest first, the key breaking ties.
 */
const PROJECT_RANK = sql`order by projects.key`;

/** Newest first; among issues of the same instant, by the project's rank; the issue's id breaks the last ties. */
export const CONTRIBUTE_ORDERING: OrderingSpec = {
  fields: { created_at: 'issues.created_at', project_rank: 'pr.project_rank' },
  default: '-created_at,project_rank',
  tieBreaker: 'issues.id',
};

interface ProjectRepository {
  repository_id: string;
  repository: string;
  project: unknown;
  project_rank: string;
}

/**
 * The repositories of active projects that are not archived, each once with the best ranked project that names it
 * (projects.repository_paths: lower-case `owner/name`), narrowed by the project, level and language filters first: a
 * few hundred projects and their repositories, joined to the issues by repository.
 */
function projectRepositories(filters: Static<typeof ContributeFilters>) {
  const conditions = [sql<SqlBool>`not r.is_archived`];
  if (filters.project !== undefined)
    conditions.push(sql`p.key_lower = ${stripPrefix(filters.project, 'www-project-')}`);
  if (filters.level !== undefined) conditions.push(sql`p.level = ${filters.level}`);
  if (filters.language !== undefined) conditions.push(sql`lower(r.language) = ${filters.language.toLowerCase()}`);
  return sql<ProjectRepository>`(
    select distinct on (r.id) r.id as repository_id, r.owner_login || '/' || r.name as repository,
      json_build_object('key', p.key, 'name', p.name, 'level', p.level) as project, p.project_rank
    from (select projects.key, lower(projects.key) as key_lower, projects.name, projects.level, projects.repository_paths,
            row_number() over (${PROJECT_RANK}) as project_rank
          from projects where projects.is_active) as p
      cross join lateral jsonb_array_elements_text(p.repository_paths) as path (path)
      join repositories r on lower(r.owner_login) = split_part(path.path, '/', 1)
        and lower(r.name) = split_part(path.path, '/', 2)
    where ${sql.join(conditions, sql` and `)}
    order by r.id, p.project_rank)`.as('pr');
}

/** Open, unassigned issues with a beginner label in the repositories above (then the `label` filter). */
export function listContribute(db: Db, filters: Static<typeof ContributeFilters>) {
  let q = db
    .selectFrom('issues')
    .innerJoin(projectRepositories(filters), 'pr.repository_id', 'issues.repository_id')
    .where('issues.state', '=', 'open')
    .where(sql<SqlBool>`not exists (select 1 from issue_assignees a where a.issue_id = issues.id)`)
    .where(hasLabel(BEGINNER_LABELS))
    .select([
      'issues.title',
      'issues.url',
      'pr.repository',
      'pr.project',
      sql<
        string[]
      >`coalesce((select json_agg(l.name order by l.name) from issue_labels il join labels l on l.id = il.label_id
        where il.issue_id = issues.id), '[]'::json)`.as('labels'),
      'issues.comments_count',
      'issues.created_at',
    ]);
  if (filters.label !== undefined && filters.label.length > 0) q = q.where(hasLabel(filters.label));
  return q;
}
