// Counts by facet: `group_by=FIELD` on a list (issue 27) answers how many of the filtered records have each value of
// the field, instead of a page: `{"group_by": "level", "groups": [{"value": "flagship", "count": 21}, …], "count": 310}`.
// Groups by count descending, then value; records without a value (NULL or empty text) are the `null` group, so the
// groups always add up to the list's `count`. The fields a list can be grouped by are declared beside its query (they
// name columns; a column not declared, a secret one, cannot be asked for). Counted once per filter set and data
// version, like the totals (counts.ts): the grouped counts are cached per table the same way. At most MAX_GROUPS
// groups are answered (issue 41: 200,001 distinct companies made 12.6 MB, kept per filter set): the database ranks
// them and sums the rest into `"other": {"groups": K, "count": N}`, a member of the answer rather than a group, since
// any value (even "other") can be a real one.
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

/** The most groups answered; beyond it, the rest are summed in `other`. */
export const MAX_GROUPS = 1_000;

export interface Groups {
  /** `[{"value":…,"count":…},…]` as JSON text: the MAX_GROUPS largest. */
  groups: string;
  count: number;
  /** The groups beyond MAX_GROUPS: how many, and how many records they hold. */
  other?: { groups: number; count: number };
}

/** The bytes a cached answer holds (memory-budget.ts). */
export const groupsBytes = (groups: Groups) => 80 + 2 * groups.groups.length;

export function groupByParam(fields: GroupFields) {
  const names = Object.keys(fields);
  return Type.Optional(
    Type.Unsafe<string>(
      Type.String({
        enum: names,
        description:
          'Counts by facet instead of a page: `{"group_by": FIELD, "groups": [{"value": V, "count": N}, …], "count": TOTAL}` ' +
          'for the same filters, groups by count descending then value, `null` for records without a value; the counts ' +
          `add up to \`count\`. At most ${MAX_GROUPS.toLocaleString('en')} groups: the others are summed in ` +
          '`"other": {"groups": K, "count": N}` (only then present; JSON only, CSV lists the groups alone), and the ' +
          `counts with it add up to \`count\`. One of ${names.map((n) => `\`${n}\``).join(', ')}.`,
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
      other: Type.Optional(
        Type.Object(
          {
            groups: Type.Integer({ description: 'Groups beyond the first MAX_GROUPS.' }),
            count: Type.Integer({ description: 'Records in them.' }),
          },
          {
            title: 'OtherGroups',
            description: `Only when there are more than ${MAX_GROUPS.toLocaleString('en')} groups: the smallest ones, summed.`,
          },
        ),
      ),
      count: Type.Integer({ description: 'Records matching the filters: the sum of the groups (and of `other`).' }),
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
  // Ranked in the database: only the first MAX_GROUPS reach the process, the rest as two numbers.
  const query = sql<Row>`
    select '[' || coalesce(string_agg(json, ',' order by rank) filter (where rank <= ${sql.lit(MAX_GROUPS)}), '') || ']' as groups,
           sum(count) as total,
           count(*) filter (where rank > ${sql.lit(MAX_GROUPS)}) as other_groups,
           sum(count) filter (where rank > ${sql.lit(MAX_GROUPS)}) as other_count
    from (select row_to_json(grouped)::text as json, count,
                 row_number() over (order by count desc, value nulls last) as rank
          from (select value, sum(n)::int8 as count
                from (${labelled(keyed as never)}) as labelled
                group by value) as grouped) as ranked`;
  const compiled = query.compile(db);
  const cacheKey = `groups\u0000${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  return cache.total(cacheKey, tablesOf(compiled.sql), async () => {
    const { rows: result } = await db.executeQuery(compiled);
    const row = result[0] as Row | undefined;
    const groups: Groups = { groups: row?.groups ?? '[]', count: Number(row?.total ?? 0) };
    const others = Number(row?.other_groups ?? 0);
    return others > 0 ? { ...groups, other: { groups: others, count: Number(row?.other_count) } } : groups;
  });
}

interface Row {
  groups: string | null;
  total: string | null;
  other_groups: string | number | null;
  other_count: string | null;
}

export function groupsJson(field: string, { groups, count, other }: Groups): string {
  const rest = other ? `,"other":{"groups":${other.groups},"count":${other.count}}` : '';
  return `{"group_by":${JSON.stringify(field)},"groups":${groups}${rest},"count":${count}}`;
}
