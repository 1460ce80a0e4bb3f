// What each resource's dump (its declaration in the registry: DumpSource, dumps/dump-source.ts) is made of: its
// list's own query (the same filters: active chapters, published members, …), selecting the fields of the record as
// its detail answers them (the detail's response schema, in its order; timestamps as the serializer writes them), and
// the detail's path parameters (dumps/dumps.queries.ts renders them batch by batch). The usual shapes are here; a
// resource with another declares it beside its routes.
import { sql, type RawBuilder } from 'kysely';
import type { TObject } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { DumpSource } from '../../../dumps/dump-source.ts';
import type { ListQuery } from './pagination.ts';

type Field = RawBuilder<unknown>;

/** The record's fields as columns of `table` of the same name, but for those computed otherwise. */
export function fieldsOf(table: string, record: TObject, computed: Record<string, Field> = {}) {
  return Object.keys(record.properties).map((name) => (computed[name] ?? sql.ref(`${table}.${name}`)).as(name));
}

export const param = (name: string, column: string) => sql.ref(column).as(`__p_${name}`);

/**
 * The leaders of every chapter or project as their details list them (leaders.queries.ts, listLeaders), one
 * row per group (`group_leaders`, joined by `withLeaders`): `[{key, name}]` in the order of the website data. A
 * leader's `key`: the login of the published member the website data names; else the published member whose login
 * is the leader's name; else the one published member (no fewer, no more) whose display name is the leader's name,
 * ignoring case. The last is one pass over the members for all leaders: asked per leader (as listLeaders does for one
 * record) it read every member each time, 100,000 of them at scale. The dump test holds both to the same answer.
 */
function groupLeaders(group: 'chapter_id' | 'project_id'): RawBuilder<unknown> {
  return sql`group_leaders AS MATERIALIZED (
    SELECT el.${sql.ref(group)} AS group_id,
      ('[' || string_agg(row_to_json(r)::text, ',' ORDER BY el.position, el.id) || ']')::json AS leaders
    FROM entity_leaders el
    JOIN leaders ON leaders.id = el.leader_id
    LEFT JOIN (
      SELECT lower(m.name) AS name, min(m.login) AS login FROM members m
      WHERE m.created_at IS NOT NULL AND m.updated_at IS NOT NULL AND lower(m.name) IN (SELECT lower(name) FROM leaders)
      GROUP BY lower(m.name) HAVING count(*) = 1
    ) AS by_name ON by_name.name = lower(leaders.name)
    CROSS JOIN LATERAL (SELECT coalesce(
        (SELECT m.login FROM members m WHERE leaders.github_login <> '' AND lower(m.login) = lower(leaders.github_login)
          AND m.created_at IS NOT NULL AND m.updated_at IS NOT NULL),
        (SELECT m.login FROM members m WHERE lower(m.login) = lower(leaders.name)
          AND m.created_at IS NOT NULL AND m.updated_at IS NOT NULL),
        by_name.login
      ) AS key, leaders.name) AS r
    WHERE el.${sql.ref(group)} IS NOT NULL
    GROUP BY el.${sql.ref(group)})`;
}

/** The rows of chapters or projects with `group_leaders` joined: their leaders field. */
function withLeaders(rows: ListQuery, table: 'chapters' | 'projects'): ListQuery {
  return rows.leftJoin('group_leaders', 'group_leaders.group_id', `${table}.id`);
}

const LEADERS: Field = sql`coalesce(group_leaders.leaders, '[]'::json)`;

/** Issues, milestones, releases and labels name their repository by its owner and name (the detail's path). */
export const REPOSITORY_PARAMS = [
  param('organization_id', 'repositories.owner_login'),
  param('repository_id', 'repositories.name'),
];

export function inRepositories(rows: ListQuery, table: string): ListQuery {
  return rows.innerJoin('repositories', 'repositories.id', `${table}.repository_id`);
}

/**
 * The dump of a table whose records are named by one column (`/<resource>/<key>`, the table named as the resource):
 * its list's rows, the detail's fields, and with `leaders` the entity's leaders as the detail shows them.
 */
export function keyedDump(
  resource: 'chapters' | 'committees' | 'events' | 'projects' | 'sponsors' | 'snapshots' | 'members' | 'organizations',
  record: TObject,
  pathParam: string,
  list: (db: Db) => unknown,
  leaders?: 'chapter_id' | 'project_id',
  column: 'key' | 'login' = 'key',
): DumpSource {
  return {
    resource,
    record,
    params: [pathParam],
    key: `${resource}.id`,
    ...(leaders ? { with: groupLeaders(leaders) } : {}),
    rows: async (db) => {
      const rows = (await list(db)) as ListQuery;
      const listed = leaders ? withLeaders(rows, resource as 'chapters' | 'projects') : rows;
      const computed: Record<string, Field> = leaders ? { leaders: LEADERS } : {};
      return listed
        .clearSelect()
        .select([...fieldsOf(resource, record, computed), param(pathParam, `${resource}.${column}`)]);
    },
  };
}

/** The dump of a GitHub account table (`/<resource>/<login>`): a keyed dump named by the login. */
export function loginDump(
  resource: 'members' | 'organizations',
  record: TObject,
  pathParam: string,
  list: (db: Db) => unknown,
): DumpSource {
  return keyedDump(resource, record, pathParam, list, undefined, 'login');
}

/** The dump of a table whose records are named in their repository (`/<organization>/<repository>/<id>`). */
export function inRepositoryDump(
  resource: 'issues' | 'milestones' | 'releases',
  record: TObject,
  idParam: string,
  idColumn: 'number' | 'tag_name',
  list: (db: Db) => unknown,
): DumpSource {
  return {
    resource,
    record,
    params: ['organization_id', 'repository_id', idParam],
    key: `${resource}.id`,
    rows: async (db) =>
      inRepositories((await list(db)) as ListQuery, resource)
        .clearSelect()
        .select([...fieldsOf(resource, record), ...REPOSITORY_PARAMS, param(idParam, `${resource}.${idColumn}`)]),
  };
}
