import { sql, type SelectQueryBuilder } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { DB } from '../../../db/schema.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type Page } from '../common/pagination.ts';
import { stripPrefix } from '../common/keys.ts';
import type { ProjectFilters } from './projects.schemas.ts';

// The contract: lists and details show active projects only; an inactive one is 404 like a missing one.
function activeProjects(db: Db) {
  return db.selectFrom('projects').where('is_active', '=', true);
}

/**
 * Where the structured search `q` will narrow the projects list. Not implemented yet: `q` is
 * accepted and validated (length) but changes nothing.
 */
export function applySearch<O>(
  query: SelectQueryBuilder<DB, 'projects', O>,
  _q: string | undefined,
): SelectQueryBuilder<DB, 'projects', O> {
  return query;
}

export function listProjects(db: Db, query: Static<typeof ProjectFilters>, order: OrderTerm[], page: Page) {
  let q = activeProjects(db).select(['key', 'name', 'level', 'created_at', 'updated_at']);
  // The level arrives lower-cased (enum normalization) and is stored lower-case (CHECK), so plain
  // equality is case-insensitive and uses projects_level_idx.
  if (query.level !== undefined) q = q.where('level', '=', query.level);
  q = applySearch(q, query.q);
  return fetchPage(q, order, page);
}

export async function getProject(db: Db, projectId: string) {
  const project = await activeProjects(db)
    .select(['id', 'key', 'name', 'level', 'description', 'created_at', 'updated_at'])
    .where(sql`lower(key)`, '=', stripPrefix(projectId, 'www-project-'))
    .executeTakeFirst();
  if (!project) return undefined;
  const leaders = await db
    .selectFrom('entity_leaders')
    .innerJoin('leaders', 'leaders.id', 'entity_leaders.leader_id')
    .select(['leaders.key', 'leaders.name'])
    .where('entity_leaders.project_id', '=', project.id)
    .orderBy('entity_leaders.position')
    .orderBy('entity_leaders.id')
    .execute();
  return { ...project, leaders };
}
