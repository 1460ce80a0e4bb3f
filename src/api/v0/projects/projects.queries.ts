import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { OrderTerm } from '../common/ordering.ts';
import { fetchPage, type ListPage } from '../common/pagination.ts';
import { stripPrefix } from '../common/keys.ts';
import { parseSearch, SEARCH_FIELDS } from '../../../search/search.parser.ts';
import { applySearch, SEARCH_COLUMNS } from '../../../search/search.sql.ts';
import type { ProjectFilters } from './projects.schemas.ts';

// The contract: lists and details show active projects only; an inactive one is 404 like a missing one.
function activeProjects(db: Db) {
  return db.selectFrom('projects').where('is_active', '=', true);
}

export function listProjects(db: Db, query: Static<typeof ProjectFilters>, order: OrderTerm[], page: ListPage) {
  let q = activeProjects(db).select(['key', 'name', 'level', 'created_at', 'updated_at']);
  // The level arrives lower-cased (enum normalization) and is stored lower-case (CHECK), so plain
  // equality is case-insensitive and uses projects_level_idx.
  if (query.level !== undefined) q = q.where('level', '=', query.level);
  if (query.q !== undefined) q = applySearch(q, parseSearch(query.q, SEARCH_FIELDS.projects), SEARCH_COLUMNS.projects);
  return fetchPage(db, q, order, page);
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
