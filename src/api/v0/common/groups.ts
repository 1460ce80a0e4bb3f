// Counts by facet: `group_by=FIELD` on a list (issue 27) answers how many of the filtered records have each value of
// the field, instead of a page: `{"group_by": "level", "groups": [{"value": "flagship", "count": 21}, …], "count": 310}`.
// Groups by count descending, then value; records without a value (NULL or empty text) are the `null` group, so the
// groups always add up to the list's `count`. The fields a list can be grouped by are declared beside its query (they
// name columns; a column not declared, a secret one, cannot be asked for). Counted once per filter set and data
// version, like the totals (counts.ts): the grouped counts are cached per table the same way.
import { sql, type RawBuilder } from 'kysely';
import { Type, type TSchema } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { CountCache } from './counts.ts';
import { tablesOf } from '../../../db/statements.ts';
import type { ListQuery } from './pagination.ts';

/**
 * One field to group by: a text column (empty text is no value), or a column taken as it is (`value`), or a key
 * column and the label shown for each key, read from the row of `table` with that id, aliased `j` (a repository's
 * `owner/name` for `repository_id`: joined once per group).
 */
export type GroupField = string | { value: string } | { key: string; table: string; label: RawBuilder<unknown> };

export type GroupFields = Record<string, GroupField>;

export interface Groups {
  /** `[{"value":…,"count":…},…]` as JSON text. */
  groups: string;
  count: number;
}

export function groupByParam(fields: GroupFields) {
  const names = Object.keys(fields);
  return Type.Optional(
    Type.Unsafe<string>(
      Type.String({
        enum: names,
        description:
          'Counts by facet instead of a page: `{"group_by": FIELD, "groups": [{"value": V, "count": N}, …], "count": TOTAL}` ' +
          'for the same filters, groups by count descending then value, `null` for records without a value; the counts ' +
          `add up to \`count\`. One of ${names.map((n) => `\`${n}\``).join(', ')}.`,
      }),
    ),
  );
}

/** The answer's schema (`ProjectGroups`), for the OpenAPI document. */
export function GroupsBody(name: string, fields: GroupFields): TSchema {
  return Type.Object(
    {
      group_by: Type.String({ enum: Object.keys(fields) }),
      groups: Type.Array(
        Type.Object(
          {
            value: Type.Union([Type.String(), Type.Boolean(), Type.Null()], {
              description: 'The value of the field; null for the records without one.',
            }),
            count: Type.Integer(),
          },
          { title: 'GroupCount' },
        ),
      ),
      count: Type.Integer({ description: 'Records matching the filters: the sum of the groups.' }),
    },
    { title: `${name}Groups` },
  );
}

type Labelled = (keyed: RawBuilder<unknown>) => RawBuilder<unknown>;

function grouping(field: GroupField): { key: RawBuilder<unknown>; labelled: Labelled } {
  const plain: Labelled = (keyed) => sql`select g.k as value, g.n from (${keyed}) as g`;
  if (typeof field === 'string') return { key: sql`nullif(${sql.ref(field)}, '')`, labelled: plain };
  if ('value' in field) return { key: sql`${sql.ref(field.value)}`, labelled: plain };
  return {
    key: sql`${sql.ref(field.key)}`,
    labelled: (keyed) =>
      sql`select ${field.label} as value, g.n from (${keyed}) as g left join ${sql.table(field.table)} as j on j.id = g.k`,
  };
}

/**
 * The groups of the filtered rows: grouped on the key column first (one pass, an index when one serves it), then each
 * key's label read once and the keys of one label added up.
 */
export function fetchGroups(db: Db, rows: ListQuery, field: GroupField, cache: CountCache<Groups>): Promise<Groups> {
  const { key, labelled } = grouping(field);
  const keyed = rows
    .clearSelect()
    .select([key.as('k'), sql`count(*)`.as('n')] as never)
    .groupBy(sql`1` as never);
  const query = sql<{ groups: string | null; total: string | null }>`
    select '[' || coalesce(string_agg(row_to_json(grouped)::text, ',' order by count desc, value nulls last), '') || ']' as groups,
           sum(count) as total
    from (select value, sum(n)::int8 as count
          from (${labelled(keyed as never)}) as labelled
          group by value) as grouped`;
  const compiled = query.compile(db);
  const cacheKey = `groups\u0000${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  return cache.total(cacheKey, tablesOf(compiled.sql), async () => {
    const { rows: result } = await db.executeQuery(compiled);
    const row = result[0] as { groups: string | null; total: string | null } | undefined;
    return { groups: row?.groups ?? '[]', count: Number(row?.total ?? 0) };
  });
}

export function groupsJson(field: string, { groups, count }: Groups): string {
  return `{"group_by":${JSON.stringify(field)},"groups":${groups},"count":${count}}`;
}
