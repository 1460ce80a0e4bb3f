// Which dumps there are and how each one's records are read: its list's own query (the same filters: active chapters,
// published members, …), selecting the fields of the record as its detail answers them (the detail's response schema,
// in its order; timestamps as the serializer writes them), and the detail's path parameters (dumps.queries.ts renders
// them batch by batch).
import { sql, type RawBuilder } from 'kysely';
import type { TObject } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { ListQuery } from '../common/pagination.ts';
import { NEW_RECORDS } from '../../../data/snapshots/monthly-snapshots.queries.ts';
import { listChapters } from '../chapters/chapters.queries.ts';
import { ChapterDetail } from '../chapters/chapters.schemas.ts';
import { listCommittees } from '../committees/committees.queries.ts';
import { CommitteeDetail } from '../committees/committees.schemas.ts';
import { listDeleted } from '../deleted/deleted.queries.ts';
import { DeletedItem } from '../deleted/deleted.schemas.ts';
import { listEvents } from '../events/events.queries.ts';
import { EventDetail } from '../events/events.schemas.ts';
import { issueRecords } from '../issues/issues.queries.ts';
import { IssueDetail } from '../issues/issues.schemas.ts';
import { listLabels } from '../labels/labels.queries.ts';
import { LabelItem } from '../labels/labels.schemas.ts';
import { listMembers } from '../members/members.queries.ts';
import { MemberDetail } from '../members/members.schemas.ts';
import { milestoneRecords } from '../milestones/milestones.queries.ts';
import { MilestoneDetail } from '../milestones/milestones.schemas.ts';
import { listOrganizations } from '../organizations/organizations.queries.ts';
import { OrganizationDetail } from '../organizations/organizations.schemas.ts';
import { listProjects } from '../projects/projects.queries.ts';
import { ProjectDetail } from '../projects/projects.schemas.ts';
import { releaseRecords } from '../releases/releases.queries.ts';
import { ReleaseDetail } from '../releases/releases.schemas.ts';
import { listRepositories } from '../repositories/repositories.queries.ts';
import { RepositoryDetail } from '../repositories/repositories.schemas.ts';
import { listSnapshots } from '../snapshots/snapshots.queries.ts';
import { SnapshotDetail, SnapshotReleaseItem } from '../snapshots/snapshots.schemas.ts';
import { listSponsors } from '../sponsors/sponsors.queries.ts';
import { SponsorDetail } from '../sponsors/sponsors.schemas.ts';

/** One dump: which records, with which fields, named by which path parameters. */
export interface DumpSource {
  /** The manifest's `resource`, and the file `/api/v0/dumps/<resource>.ndjson.gz`. */
  resource: string;
  /** The fields of each line's `record`, in this order: the detail's response schema (a list item where none). */
  record: TObject;
  /** The names of each line's `params`, in the order of the detail's path. */
  params: readonly string[];
  /** The records: their fields by name, each param as `__p_<name>`; read in the order of `key`. */
  rows: (db: Db) => ListQuery | Promise<ListQuery>;
  /** The table's id: the order of the lines, and where each batch starts. */
  key: string;
  /** Named subqueries the rows use (`WITH …`). */
  with?: RawBuilder<unknown>;
}

type Field = RawBuilder<unknown>;

/** The record's fields as columns of `table` of the same name, but for those computed otherwise. */
function fieldsOf(table: string, record: TObject, computed: Record<string, Field> = {}) {
  return Object.keys(record.properties).map((name) => (computed[name] ?? sql.ref(`${table}.${name}`)).as(name));
}

const param = (name: string, column: string) => sql.ref(column).as(`__p_${name}`);

/**
 * The leaders of every chapter or project as their details list them (common/leaders.queries.ts, listLeaders), one
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
const REPOSITORY_PARAMS = [
  param('organization_id', 'repositories.owner_login'),
  param('repository_id', 'repositories.name'),
];

function inRepositories(rows: ListQuery, table: string): ListQuery {
  return rows.innerJoin('repositories', 'repositories.id', `${table}.repository_id`);
}

/**
 * The dump of a table whose records are named by their key alone (`/<resource>/<key>`, the table named as the
 * resource): its list's rows, the detail's fields, and with `leaders` the entity's leaders as the detail shows them.
 */
function keyedDump(
  resource: 'chapters' | 'committees' | 'events' | 'projects' | 'sponsors' | 'snapshots',
  record: TObject,
  pathParam: string,
  list: (db: Db) => unknown,
  leaders?: 'chapter_id' | 'project_id',
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
        .select([...fieldsOf(resource, record, computed), param(pathParam, `${resource}.key`)]);
    },
  };
}

/** The dump of a table whose records are named in their repository (`/<organization>/<repository>/<id>`). */
function inRepositoryDump(
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

/** Every dump, in the order of the manifest. */
export const DUMP_SOURCES: readonly DumpSource[] = [
  keyedDump('chapters', ChapterDetail, 'chapter_id', (db) => listChapters(db, {}), 'chapter_id'),
  keyedDump('committees', CommitteeDetail, 'committee_id', (db) => listCommittees(db, {})),
  keyedDump('events', EventDetail, 'event_id', (db) => listEvents(db, {})),
  keyedDump('projects', ProjectDetail, 'project_id', (db) => listProjects(db, {}), 'project_id'),
  keyedDump('sponsors', SponsorDetail, 'sponsor_id', (db) => listSponsors(db, {})),
  keyedDump('snapshots', SnapshotDetail, 'snapshot_id', (db) => listSnapshots(db)),
  {
    // The one sub-list of snapshots that the other dumps cannot give: which releases count (neither drafts nor
    // pre-releases, which no public field shows). The others are the records of their lists by `created_at`.
    resource: 'snapshot-releases',
    record: SnapshotReleaseItem,
    params: ['snapshot_id', 'organization_id', 'repository_id', 'release_id'],
    key: 'releases.id',
    rows: (db) =>
      db
        .selectFrom('releases')
        .innerJoin('repositories', 'repositories.id', 'releases.repository_id')
        .leftJoin('organizations', 'organizations.id', 'repositories.organization_id')
        // A snapshot's period is its month (UTC), start_at to end_at included (snapshots.queries.ts).
        .innerJoin('snapshots', (join) =>
          join.on(sql<boolean>`snapshots.key = to_char(releases.created_at AT TIME ZONE 'UTC', 'YYYY-MM')`),
        )
        .where(NEW_RECORDS.releases.where)
        .select([
          ...fieldsOf('releases', SnapshotReleaseItem, {
            organization_login: sql`organizations.login`,
            repository_name: sql`repositories.name`,
          }),
          param('snapshot_id', 'snapshots.key'),
          ...REPOSITORY_PARAMS,
          param('release_id', 'releases.tag_name'),
        ]) as unknown as ListQuery,
  },
  {
    resource: 'organizations',
    record: OrganizationDetail,
    params: ['organization_id'],
    key: 'organizations.id',
    rows: (db) =>
      (listOrganizations(db, {}) as ListQuery)
        .clearSelect()
        .select([...fieldsOf('organizations', OrganizationDetail), param('organization_id', 'organizations.login')]),
  },
  {
    resource: 'members',
    record: MemberDetail,
    params: ['member_id'],
    key: 'members.id',
    rows: (db) =>
      (listMembers(db, {}) as ListQuery)
        .clearSelect()
        .select([...fieldsOf('members', MemberDetail), param('member_id', 'members.login')]),
  },
  {
    resource: 'repositories',
    record: RepositoryDetail,
    params: ['organization_id', 'repository_id'],
    key: 'repositories.id',
    rows: (db) =>
      (listRepositories(db, {}) as ListQuery)
        .clearSelect()
        .select([...fieldsOf('repositories', RepositoryDetail), ...REPOSITORY_PARAMS]),
  },
  inRepositoryDump('issues', IssueDetail, 'issue_id', 'number', (db) => issueRecords.list(db, {})),
  {
    // Labels have no detail: the list's item, and its repository's path parameters (a label is its name in it).
    resource: 'labels',
    record: LabelItem,
    params: ['organization_id', 'repository_id'],
    key: 'labels.id',
    rows: (db) =>
      inRepositories(listLabels(db, {}) as ListQuery, 'labels')
        .clearSelect()
        .select([...fieldsOf('labels', LabelItem), ...REPOSITORY_PARAMS]),
  },
  inRepositoryDump('milestones', MilestoneDetail, 'milestone_id', 'number', (db) => milestoneRecords.list(db, {})),
  inRepositoryDump('releases', ReleaseDetail, 'release_id', 'tag_name', (db) => releaseRecords.list(db, {})),
  {
    // The feed of records that left their lists has no detail either: its list's item (resource, key, deleted_at).
    resource: 'deleted',
    record: DeletedItem,
    params: [],
    key: 'tombstones.id',
    rows: (db) => (listDeleted(db, {}) as ListQuery).clearSelect().select(fieldsOf('tombstones', DeletedItem)),
  },
];
