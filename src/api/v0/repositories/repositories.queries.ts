import { sql, type SelectQueryBuilder } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { DB } from '../../../db/schema.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { parseSearch, SEARCH_FIELDS } from '../../../list-filter/filter.parser.ts';
import { applySearch, SEARCH_COLUMNS } from '../../../list-filter/filter.sql.ts';
import { columnsOf } from '../common/schemas.ts';
import { RepositoryDetail, RepositoryItem, type RepositoryFilters } from './repositories.schemas.ts';

export interface RepositoryScope {
  organization?: string;
  repository?: string;
}

export const isScoped = (scope: RepositoryScope) => scope.organization !== undefined || scope.repository !== undefined;

/**
 * Narrows a query that has `repositories` joined to the given owner login and repository name.
 * lower() on both sides matches the index on (lower(owner_login), lower(name)).
 */
export function whereRepository<TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  scope: RepositoryScope,
): SelectQueryBuilder<DB, TB, O> {
  let q = query;
  if (scope.organization !== undefined)
    q = q.where(sql`lower(repositories.owner_login)`, '=', scope.organization.toLowerCase());
  if (scope.repository !== undefined) q = q.where(sql`lower(repositories.name)`, '=', scope.repository.toLowerCase());
  return q;
}

/** The records of `table` joined to their repository, narrowed to the scope: what a repository-scoped detail reads. */
export function inRepository<T extends 'issues' | 'milestones' | 'releases'>(
  db: Db,
  table: T,
  scope: RepositoryScope,
): SelectQueryBuilder<DB, T | 'repositories', object> {
  const joined = db
    .selectFrom(table as 'issues')
    .innerJoin(
      'repositories',
      'repositories.id',
      `${table}.repository_id` as 'issues.repository_id',
    ) as unknown as SelectQueryBuilder<DB, T | 'repositories', object>;
  return whereRepository(joined, scope);
}

/**
 * Narrows a list of issues, milestones or releases to the repositories of the scope without joining
 * them. One repository (organization and name: unique) is looked up first and its id given as a value:
 * the planner then knows how many rows it holds (a large repository is in the column's statistics) and
 * reads the index on (repository_id, ordering column, id) in order, stopping after a page. A join, or
 * a scalar subquery, makes it plan for an average repository and sort every row of the large one
 * (311 ms for 56k issues, issue 12). Several repositories (one name, or one organization) stay a subquery.
 */
export async function whereInRepositories<DB2, TB extends keyof DB2, O>(
  db: Db,
  query: SelectQueryBuilder<DB2, TB, O>,
  column: string,
  scope: RepositoryScope,
): Promise<SelectQueryBuilder<DB2, TB, O>> {
  if (scope.organization !== undefined && scope.repository !== undefined) {
    const found = await whereRepository(
      db.selectFrom('repositories').select('repositories.id'),
      scope,
    ).executeTakeFirst();
    return query.where(found ? sql<boolean>`${sql.ref(column)} = ${found.id}` : sql<boolean>`false`);
  }
  if (!isScoped(scope)) return query;
  const ids = whereRepository(db.selectFrom('repositories').select('repositories.id'), scope);
  return query.where(sql<boolean>`${sql.ref(column)} in (${ids})`);
}

/** The rows of the list for these filters, before ordering and paging (bench/search.ts pages it too). */
export function filterRepositories(db: Db, query: Static<typeof RepositoryFilters>) {
  let q = db.selectFrom('repositories').select(columnsOf('repositories', RepositoryItem));
  q = whereRepository(q, { organization: query.organization_id });
  if (query.q !== undefined)
    q = applySearch(q, parseSearch(query.q, SEARCH_FIELDS.repositories), SEARCH_COLUMNS.repositories);
  return q;
}

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const REPOSITORY_ORDERING: OrderingSpec = {
  fields: { created_at: 'repositories.created_at', updated_at: 'repositories.updated_at' },
  default: '-created_at,-updated_at',
  tieBreaker: 'repositories.id',
};

/** `group_by`: the fields of the list's facets (groups.ts). */
export const REPOSITORY_GROUPS: GroupFields = {
  language: 'repositories.language',
  organization: 'repositories.owner_login',
};

export function listRepositories(db: Db, query: Static<typeof RepositoryFilters>) {
  return filterRepositories(db, query);
}

export function getRepository(db: Db, scope: Required<RepositoryScope>) {
  const q = db.selectFrom('repositories').select(columnsOf('repositories', RepositoryDetail));
  return whereRepository(q, scope).executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleRepository(db: Db) {
  const row = await db
    .selectFrom('repositories')
    .select(['owner_login', 'name'])
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row && { organization_id: row.owner_login, repository_id: row.name };
}

/**
 * `group_by` of the records GitHub keeps per repository: `organization` (the owner's login) and `repository`
 * (`owner/name`), grouped on `repository_id` and named once per repository.
 */
export function repositoryGroups(table: 'issues' | 'milestones' | 'releases' | 'labels'): GroupFields {
  const key = `${table}.repository_id`;
  return {
    organization: { key, table: 'repositories', label: sql`j.owner_login` },
    repository: { key, table: 'repositories', label: sql`j.owner_login || '/' || j.name` },
  };
}
