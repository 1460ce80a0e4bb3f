import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { stripPrefix } from '../common/id-prefix.ts';
import { listLeaders } from '../common/leaders.queries.ts';
import { parseSearch, SEARCH_FIELDS } from '../../../list-filter/filter.parser.ts';
import { applySearch, SEARCH_COLUMNS } from '../../../list-filter/filter.sql.ts';
import { columnsOf } from '../common/schemas.ts';
import { compactJson, ISO_MICROS } from '../../../db/statements.ts';
import { ProjectItem, type ProjectFilters } from './projects.schemas.ts';

// The contract: lists and details show active projects only; an inactive one is 404 like a missing one.
function activeProjects(db: Db) {
  return db.selectFrom('projects').where('projects.is_active', '=', true);
}

/**
 * The dump's computed extra field (projects.schemas.ts, ProjectStored): the project's stored health, every field the
 * health detail answers besides the project's own, its time to the microsecond; null when none is computed yet.
 */
export const PROJECT_HEALTH_EXTRA = {
  // Compact JSON (json keeps the text as it is): health → checks → a check → its values.
  health: sql`(select ${compactJson(
    sql`jsonb_build_object('score', ph.score, 'bucket', ph.bucket, 'coverage', ph.coverage,
    'formula', ph.formula, 'computed_at', to_char(ph.computed_at at time zone 'UTC', ${sql.lit(ISO_MICROS)}),
    'data_version', ph.data_version, 'checks', ph.checks, 'metrics', ph.metrics)`,
    3,
  )}::json from project_health ph where ph.project_id = projects.id)`,
};

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const PROJECT_ORDERING: OrderingSpec = {
  fields: {
    created_at: 'projects.created_at',
    updated_at: 'projects.updated_at',
    name: 'projects.name',
    health_score: 'project_health.score',
  },
  default: '-created_at',
  tieBreaker: 'projects.id',
  // A project not computed yet (none after an import or sync) has no score: last ascending, first descending.
  nullable: ['health_score'],
  // Equal scores read by key (docs/health.md): a total order with the id after it.
  then: { health_score: 'projects.key' },
};

/**
 * `group_by`: the fields of the list's facets (groups.ts). The health bucket is project_health's, which the list's
 * query (and the snapshots' projects sub-list) joins.
 */
export const PROJECT_GROUPS: GroupFields = {
  level: { value: 'projects.level' },
  type: { value: 'projects.type' },
  health_bucket: { value: 'project_health.bucket' },
};

export function listProjects(db: Db, query: Static<typeof ProjectFilters>) {
  // Health (docs/health.md): one row per project at most, for the ordering, the filter and the facet.
  let q = activeProjects(db)
    .leftJoin('project_health', 'project_health.project_id', 'projects.id')
    .select(columnsOf('projects', ProjectItem));
  // The level arrives lower-cased (enum normalization) and is stored lower-case (CHECK), so plain
  // equality is case-insensitive and uses projects_level_idx.
  if (query.level !== undefined) q = q.where('projects.level', '=', query.level);
  // Lower-cased by the query normalization, stored lower-case (CHECK): plain IN is case-insensitive.
  if (query.type !== undefined) q = q.where('projects.type', 'in', query.type);
  if (query.health_bucket !== undefined) q = q.where('project_health.bucket', '=', query.health_bucket);
  if (query.q !== undefined) q = applySearch(q, parseSearch(query.q, SEARCH_FIELDS.projects), SEARCH_COLUMNS.projects);
  return q;
}

export async function getProject(db: Db, projectId: string) {
  const project = await activeProjects(db)
    .select(['id', 'key', 'name', 'level', 'type', 'description', 'created_at', 'updated_at'])
    .where(sql`lower(key)`, '=', stripPrefix(projectId, 'www-project-'))
    .executeTakeFirst();
  if (!project) return undefined;
  const leaders = await listLeaders(db, 'project_id', project.id);
  return { ...project, leaders };
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleProject(db: Db) {
  const value = await firstOf(db, 'projects', 'key', { active: true });
  return value === undefined ? undefined : { project_id: value };
}
