import { sql, type SqlBool } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { stripPrefix } from '../common/id-prefix.ts';
import { hasLabel } from '../issues/issue-filters.queries.ts';
import { EmptiedMap } from '../../../memory-budget.ts';
import type { ContributeFilters } from './contribute.schemas.ts';

/**
 * The order of the projects among themselves, the second term of the list's ordering (`project_rank`, 1 = first): by
 * health score (docs/health.md), highest first; a project not yet scored after those scored; the key breaks ties.
 */
const PROJECT_RANK = sql`order by project_health.score desc nulls last, projects.key`;

/** Newest first; among issues of the same instant, by the project's rank; the issue's id breaks the last ties. */
export const CONTRIBUTE_ORDERING: OrderingSpec = {
  fields: { created_at: 'issues.created_at', project_rank: 'issues.project_rank' },
  default: '-created_at,project_rank',
  tieBreaker: 'issues.id',
};

interface ProjectRepositories {
  repository_ids: string[];
  project_ids: string[];
  project_ranks: string[];
}

/**
 * The repositories of active projects that are not archived, each once with the best ranked
 * project that names it (projects.repository_paths: lower-case `owner/name`, each looked up in the unique index on the
 * lower-case names), narrowed by the project, level and language filters: a few thousand at most. Looked up first and
 * given to the list's query as values, so that the planner knows how many there are (as whereInRepositories does).
 */
async function projectRepositories(db: Db, filters: Static<typeof ContributeFilters>): Promise<ProjectRepositories> {
  // The rank is over every active project (the window below), whichever the filters keep.
  const kept = [sql<SqlBool>`true`];
  if (filters.project !== undefined) kept.push(sql`p.key_lower = ${stripPrefix(filters.project, 'www-project-')}`);
  if (filters.level !== undefined) kept.push(sql`p.level = ${filters.level}`);
  const repositories = [sql<SqlBool>`not r.is_archived`];
  if (filters.language !== undefined) repositories.push(sql`lower(r.language) = ${filters.language.toLowerCase()}`);
  const { rows } = await sql<ProjectRepositories>`
    select coalesce(array_agg(s.repository_id), '{}') as repository_ids, coalesce(array_agg(s.project_id), '{}') as project_ids,
      coalesce(array_agg(s.project_rank), '{}') as project_ranks
    from (
      select distinct on (r.id) r.id as repository_id, p.id as project_id, p.project_rank
      from (select projects.id, lower(projects.key) as key_lower, projects.level, projects.repository_paths,
              row_number() over (${PROJECT_RANK}) as project_rank
            from projects left join project_health on project_health.project_id = projects.id
            where projects.is_active) as p
        cross join lateral jsonb_array_elements_text(p.repository_paths) as path (path)
        cross join lateral (select r.id from repositories r
          where lower(r.owner_login) = split_part(path.path, '/', 1) and lower(r.name) = split_part(path.path, '/', 2)
            and ${sql.join(repositories, sql` and `)}
          limit 1) as r
      where ${sql.join(kept, sql` and `)}
      order by r.id, p.project_rank) as s`.execute(db);
  return rows[0]!;
}

/**
 * The repositories' constants, written into the statement rather than sent as values: a named statement
 * (db/server/prepared.ts) would otherwise get PostgreSQL's generic plan after five executions, planned for an array of
 * unknown contents. `repositories`: the ids (an array); `ranks` and `projects`: JSON objects from each repository id to
 * its project's rank and id, looked up per row (jsonb's keys are sorted: a binary search), so the candidates need no
 * join to keep the order the index gives them in.
 */
interface Constants {
  repositories: string;
  ranks: string;
  projects: string;
  /** How many repositories `repositories` holds. */
  count: number;
}

function constantsOf(found: ProjectRepositories): Constants {
  const { repository_ids: ids, project_ranks: ranks, project_ids: projects } = found;
  for (const value of [...ids, ...ranks, ...projects])
    if (!/^\d+$/.test(String(value))) throw new Error(`not an id: ${String(value)}`);
  const object = (values: readonly string[]) => `'{${ids.map((id, i) => `"${id}":${values[i]}`).join(',')}}'::jsonb`;
  return {
    repositories: `'{${ids.join(',')}}'::bigint[]`,
    ranks: object(ranks),
    projects: object(projects),
    count: ids.length,
  };
}

/**
 * The constants of projectRepositories' answers, by filters and by the versions of the tables they read
 * (table_versions, moved by every statement that writes one of them: migration 0009): read again only after projects,
 * their health or repositories changed. The versions are read first, so an answer is never remembered under versions
 * older than the rows it read. The lookup of ~2,000 repositories by name was most of the first page's time once the
 * candidates were an index walk (and of 100,000, every repository of the generated mirror, ~1.5 s).
 */
const REPOSITORY_TABLES = ['projects', 'project_health', 'repositories'];
const remembered = new EmptiedMap<Constants>(
  100,
  (key, value) => 64 + key.length * 2 + value.repositories.length + value.ranks.length + value.projects.length,
);

async function repositoryConstants(db: Db, filters: Static<typeof ContributeFilters>): Promise<Constants> {
  const { rows } = await sql<{ versions: string | null }>`
    select string_agg(table_name || ':' || version, ',' order by table_name) as versions from table_versions
    where table_name in (${sql.join(REPOSITORY_TABLES)})`.execute(db);
  const key = JSON.stringify([rows[0]?.versions ?? '', filters.project, filters.level, filters.language]);
  const known = remembered.get(key);
  if (known) return known;
  const found = constantsOf(await projectRepositories(db, filters));
  remembered.set(key, found);
  return found;
}

/** Below this many repositories the candidates are sorted rather than walked in order (listContribute). */
const FEW_REPOSITORIES = 500;

/** Open, unassigned issues with a beginner label in the repositories above (then the `label` filter). */
export async function listContribute(db: Db, filters: Static<typeof ContributeFilters>) {
  const constants = await repositoryConstants(db, filters);
  const [repositories, rankOf, projectOf] = [constants.repositories, constants.ranks, constants.projects].map(sql.raw);
  // With few repositories (a project, a level, a language), their candidates are found by the repository's index and
  // sorted: a few hundred rows at most. Given the plain column, the planner walked the whole index by creation time
  // instead, filtering by repository, for every such request (p50 30-40 ms at 1M issues against ~5 before the
  // candidates table: bench/SCALE.md). The expression hides that index's order from it; with many repositories (the
  // unfiltered list) the walk that stops after the page is kept.
  const createdAt = constants.count <= FEW_REPOSITORIES ? sql`c.created_at + interval '0 s'` : sql`c.created_at`;
  // The candidates (contribute_candidates, which triggers keep: every open, unassigned issue with a beginner label,
  // migration 0019) of those repositories, each with its project and that project's rank: a few thousand rows, read
  // from the table's index on the repositories and sorted; the first page newest first may instead walk its index on
  // created_at and stop after the page (bench/contribute-scale.ts, docs/contribute.md). The fields only the page shows
  // are subqueries, which PostgreSQL evaluates for the page's rows alone.
  const candidates = sql<{
    id: string;
    repository_id: string;
    created_at: Date;
    project_rank: string;
    project_id: string;
  }>`(
    select c.issue_id as id, c.repository_id, ${createdAt} as created_at,
      (${rankOf} ->> c.repository_id::text)::bigint as project_rank,
      (${projectOf} ->> c.repository_id::text)::bigint as project_id
    from contribute_candidates c
    where c.repository_id = any(${repositories}))`;
  const own = (column: string) => sql`(select i.${sql.ref(column)} from issues i where i.id = issues.id)`;
  let q = db.selectFrom(candidates.as('issues')).select([
    own('title').as('title'),
    own('url').as('url'),
    sql<string>`(select r.owner_login || '/' || r.name from repositories r where r.id = issues.repository_id)`.as(
      'repository',
    ),
    sql<unknown>`(select json_build_object('key', p.key, 'name', p.name, 'level', p.level) from projects p
        where p.id = issues.project_id)`.as('project'),
    sql<
      string[]
    >`coalesce((select json_agg(l.name order by l.name) from issue_labels il join labels l on l.id = il.label_id
        where il.issue_id = issues.id), '[]'::json)`.as('labels'),
    own('comments_count').as('comments_count'),
    'issues.created_at',
  ]);
  if (filters.label !== undefined && filters.label.length > 0) q = q.where(hasLabel(filters.label));
  return q;
}
