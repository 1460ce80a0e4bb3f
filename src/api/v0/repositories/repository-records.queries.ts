// The queries of the records GitHub keeps per repository (issues, milestones, releases): their lists and details
// differ only in the table, the columns their schemas name, the key of the detail and the equality filters.
import type { Static, TObject } from '@sinclair/typebox';
import type { SelectQueryBuilder } from 'kysely';
import type { Db } from '../../../db/index.ts';
import type { DB } from '../../../db/schema.ts';
import { columnsOf } from '../common/schemas.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { firstInRepository } from '../common/examples.queries.ts';
import { inRepository, repositoryGroups, whereInRepositories, type RepositoryScope } from './repositories.queries.ts';
import type { GroupFields } from '../common/groups.ts';

type ScopedTable = 'issues' | 'milestones' | 'releases';

/** `S` when every property of the schema is a column of `table`; otherwise `never`, a compile error where it is passed. */
type OfColumns<T extends ScopedTable, S extends TObject> = [Exclude<keyof Static<S>, keyof DB[T]>] extends [never]
  ? S
  : never;

/**
 * The list and detail of `table`. The list selects the columns `item` names, narrowed to the repository scope and,
 * for each `equal` filter that is given, to the rows whose column of the same name has that value; its `ordering`
 * sorts by the columns `ordering.by` names (the id breaks ties). The detail selects the columns `detail` names of
 * the record whose key column (`key[0]`) has the given value in one repository; `example` gives the path parameters
 * (`key[1]` for the key) of the first record.
 */
export function repositoryRecords<
  T extends ScopedTable,
  I extends TObject,
  D extends TObject,
  F extends keyof DB[T] & string,
  P extends string,
>(
  table: T,
  item: OfColumns<T, I>,
  detail: OfColumns<T, D>,
  parts: {
    key: readonly ['number' | 'tag_name', P];
    equal: readonly F[];
    /** Columns `group_by` accepts as they are, beside `organization` and `repository`. */
    group?: readonly F[];
    ordering: { by: readonly (keyof DB[T] & string)[]; default: string; nullable?: string[] };
  },
) {
  // Kysely cannot resolve the columns of a table given as a type parameter: the queries are written for one of the
  // three tables, and the schemas' types (checked against the table above) type what they give.
  type Rows = SelectQueryBuilder<DB, 'issues', object>;
  type Columns = ReadonlyArray<`issues.${keyof DB['issues'] & string}`>;
  const items = columnsOf(table, item) as readonly string[] as Columns;
  const details = columnsOf(table, detail) as readonly string[] as Columns;
  const column = (name: string) => `${table}.${name}` as 'issues.number';
  const [key, param] = parts.key;
  const { by, ...ordering } = parts.ordering;
  return {
    ordering: {
      ...ordering,
      fields: Object.fromEntries(by.map((name) => [name, column(name)])),
      tieBreaker: column('id'),
    } satisfies OrderingSpec,
    groups: {
      ...Object.fromEntries((parts.group ?? []).map((name) => [name, { value: column(name) }])),
      ...repositoryGroups(table),
    } satisfies GroupFields,
    list: async (db: Db, query: RepositoryScope & Partial<Record<F, string | number>>) => {
      let q = (db.selectFrom(table) as unknown as Rows).select(items);
      for (const name of parts.equal) {
        const value = query[name];
        if (value !== undefined) q = q.where(column(name), '=', value as number);
      }
      return await whereInRepositories(db, q, column('repository_id'), query);
    },
    get: (db: Db, scope: Required<RepositoryScope>, value: number | string) =>
      (inRepository(db, table, scope) as unknown as Rows)
        .select(details)
        .where(column(key), '=', value as number)
        .executeTakeFirst() as Promise<Static<D> | undefined>,
    example: (db: Db) => firstInRepository(db, table, key, param),
  };
}
