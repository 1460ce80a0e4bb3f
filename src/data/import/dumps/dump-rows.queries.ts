// Rows from another instance's dumps (`cds import --from-dumps`): each line `{"params", "record"}` (the detail's path
// parameters and the record as its detail answers it) back into the row the detail was read from. A batch of lines
// is one parameter, a JSON array; the database takes the fields apart (jsonb_to_record) and inserts, in the lines'
// order, so that the new rows' ids are in the order of the source's (lists break ties by id: the same pages).
// What a filter, the search, an ordering or a group_by reads but no detail shows comes in each line's `extra`
// (dumps/dump-source.ts): an event's category, a repository's language, a chapter's description, …; the import
// refuses dumps that lack one (requiredExtras). What nothing reads gets the value an import gives when the source
// says nothing (docs/decisions.md, dumps): GitHub ids (negative: none), a repository's topics, and the like.
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';

/** How a dump's lines become rows of one table. */
interface Target {
  table: string;
  /** The fields of the line's record and params read, with their SQL types (jsonb_to_record's column list). */
  record: string;
  params?: string;
  /** The fields of the line's `extra` read, with their SQL types: each one required of the source's dumps. */
  extra?: string;
  /**
   * Column → expression over `r` (the record), `p` (the params), `x` (the extra), `rep` (the repository) and `e.n`
   * (the line).
   */
  columns: Record<string, string>;
  /** The record names its repository by owner and name (params organization_id and repository_id). */
  inRepository?: boolean;
}

const GITHUB_ID = '-(o.base + e.n)';
const RECORD_DATES = 'created_at timestamptz, updated_at timestamptz';
const same = (...names: string[]) => Object.fromEntries(names.map((name) => [name, `r.${name}`]));

const TARGETS: Record<string, Target> = {
  organizations: {
    table: 'organizations',
    record: `login text, name text, company text, location text, ${RECORD_DATES}`,
    extra: 'description text',
    columns: {
      github_id: GITHUB_ID,
      description: 'x.description',
      ...same('login', 'name', 'company', 'location', 'created_at', 'updated_at'),
    },
  },
  members: {
    table: 'members',
    record: `login text, name text, avatar_url text, url text, bio text, company text, location text, title text,
      twitter_username text, followers_count int, following_count int, public_repositories_count int, ${RECORD_DATES}`,
    columns: {
      github_id: GITHUB_ID,
      ...same('login', 'name', 'avatar_url', 'url', 'bio', 'company', 'location', 'title', 'twitter_username'),
      ...same('followers_count', 'following_count', 'public_repositories_count', 'created_at', 'updated_at'),
    },
  },
  repositories: {
    table: 'repositories',
    record: `name text, description text, commits_count int, contributors_count int, forks_count int,
      stars_count int, open_issues_count int, ${RECORD_DATES}`,
    params: 'organization_id text, repository_id text',
    extra: 'language text, is_archived boolean, is_fork boolean',
    columns: {
      github_id: GITHUB_ID,
      language: 'x.language',
      is_archived: 'x.is_archived',
      is_fork: 'x.is_fork',
      owner_login: 'p.organization_id',
      organization_id: '(SELECT o.id FROM organizations o WHERE lower(o.login) = lower(p.organization_id))',
      ...same('name', 'description', 'commits_count', 'contributors_count', 'forks_count', 'stars_count'),
      ...same('open_issues_count', 'created_at', 'updated_at'),
    },
  },
  labels: {
    table: 'labels',
    record: 'name text, description text, color text',
    extra: 'nest_created_at timestamptz, nest_updated_at timestamptz',
    inRepository: true,
    columns: {
      github_id: GITHUB_ID,
      repository_id: 'rep.id',
      nest_created_at: 'x.nest_created_at',
      nest_updated_at: 'x.nest_updated_at',
      ...same('name', 'description', 'color'),
    },
  },
  milestones: {
    table: 'milestones',
    record: `number int, title text, state text, body text, url text, open_issues_count int, closed_issues_count int,
      due_on timestamptz, ${RECORD_DATES}`,
    inRepository: true,
    columns: {
      github_id: GITHUB_ID,
      repository_id: 'rep.id',
      ...same('number', 'title', 'state', 'body', 'url', 'open_issues_count', 'closed_issues_count', 'due_on'),
      ...same('created_at', 'updated_at'),
    },
  },
  issues: {
    table: 'issues',
    record: `title text, state text, body text, url text, ${RECORD_DATES}`,
    params: 'issue_id int',
    // Its labels and assignees are links, written after the rows (issue-links.queries.ts).
    extra: 'comments_count int, labels jsonb, assignees jsonb',
    inRepository: true,
    columns: {
      github_id: GITHUB_ID,
      repository_id: 'rep.id',
      number: 'p.issue_id',
      comments_count: 'x.comments_count',
      ...same('title', 'state', 'body', 'url', 'created_at', 'updated_at'),
    },
  },
  releases: {
    table: 'releases',
    record: 'name text, tag_name text, description text, published_at timestamptz, created_at timestamptz',
    inRepository: true,
    // Marked a draft until the releases of the snapshots say whether it counts (countedReleases, settleReleases).
    columns: {
      github_id: GITHUB_ID,
      repository_id: 'rep.id',
      is_draft: 'true',
      ...same('name', 'tag_name', 'description', 'published_at', 'created_at'),
    },
  },
  committees: {
    table: 'committees',
    record: `key text, name text, description text, ${RECORD_DATES}`,
    columns: { is_active: 'true', ...same('key', 'name', 'description', 'created_at', 'updated_at') },
  },
  chapters: {
    table: 'chapters',
    record: `key text, name text, latitude float8, longitude float8, country text, region text, ${RECORD_DATES}`,
    extra: 'description text',
    columns: {
      is_active: 'true',
      description: 'x.description',
      ...same('key', 'name', 'latitude', 'longitude', 'country', 'region', 'created_at', 'updated_at'),
    },
  },
  projects: {
    table: 'projects',
    record: `key text, name text, level text, type text, description text, ${RECORD_DATES}`,
    // Its stored health is written after the rows (insertProjectHealth).
    extra: 'repository_paths jsonb, health jsonb',
    columns: {
      is_active: 'true',
      repository_paths: 'x.repository_paths',
      ...same('key', 'name', 'level', 'type', 'description', 'created_at', 'updated_at'),
    },
  },
  events: {
    table: 'events',
    record: `key text, name text, description text, start_date date, end_date date, latitude float8,
      longitude float8, url text`,
    extra: 'category text',
    // The website's events have no dates of their own: the import stamps them with the start date (owasp.rows.ts).
    columns: {
      category: 'x.category',
      created_at: "(r.start_date::text || 'T00:00:00Z')::timestamptz",
      updated_at: "(r.start_date::text || 'T00:00:00Z')::timestamptz",
      ...same('key', 'name', 'description', 'start_date', 'end_date', 'latitude', 'longitude', 'url'),
    },
  },
  sponsors: {
    table: 'sponsors',
    record: `key text, name text, sponsor_type text, description text, url text, image_url text, job_url text,
      is_member boolean, member_type text`,
    columns: same(
      'key',
      'name',
      'sponsor_type',
      'description',
      'url',
      'image_url',
      'job_url',
      'is_member',
      'member_type',
    ),
  },
  snapshots: {
    table: 'snapshots',
    record: `key text, title text, new_chapters_count int, new_issues_count int, new_projects_count int,
      new_releases_count int, new_users_count int, ${RECORD_DATES}`,
    // The period of the month, to the microsecond, as the rebuild writes it (the detail shows milliseconds).
    columns: {
      start_at: "(r.key || '-01')::timestamp AT TIME ZONE 'UTC'",
      end_at: "((r.key || '-01')::timestamp + interval '1 month') AT TIME ZONE 'UTC' - interval '1 microsecond'",
      ...same('key', 'title', 'new_chapters_count', 'new_issues_count', 'new_projects_count'),
      ...same('new_releases_count', 'new_users_count', 'created_at', 'updated_at'),
    },
  },
  // The history of health is kept, not recomputed: its past days are what the source computed then.
  'project-health-history': {
    table: 'project_health_history',
    record: 'day date, score float8, bucket text, coverage float8, formula text, data_version bigint',
    params: 'project_id text',
    columns: { project_key: 'p.project_id', ...same('day', 'score', 'bucket', 'coverage', 'formula', 'data_version') },
  },
  deleted: {
    table: 'tombstones',
    record: 'resource text, key text, deleted_at timestamptz',
    columns: same('resource', 'key', 'deleted_at'),
  },
};

/** The dumps that become rows, in the order they are written (a record after those it refers to). */
export const ROW_DUMPS = Object.keys(TARGETS);

/**
 * The fields of its lines' `extra` the import reads of each dump: a source whose manifest does not list them all
 * (`extra_fields`: older dumps) is refused before anything is written (dumps.load.ts). test/dumps-seed.test.ts holds
 * them equal to what the registry's dumps carry.
 */
export const REQUIRED_EXTRAS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries(TARGETS).map(([resource, target]) => [
    resource,
    (target.extra ?? '')
      .split(',')
      .map((field) => field.trim().split(/\s+/)[0]!)
      .filter(Boolean),
  ]),
);

/**
 * The dumps that are no table's rows, each with what the seeding does with it instead. With ROW_DUMPS, every dump the
 * registry declares (api/v0/resources.ts, DUMPS): test/dumps-seed.test.ts compares them, so that a new dump is seeded
 * or said not to be, never forgotten.
 */
export const NOT_ROW_DUMPS: Readonly<Record<string, string>> = {
  'snapshot-releases': 'marks the releases the snapshots count (markCountedReleases)',
};

/** The lines of a batch as the statements' first parameter: one JSON array of them (the lines are not parsed here). */
export function linesParameter(lines: readonly string[]): string {
  return `[${lines.join(',')}]`;
}

const REPOSITORY_PARAMS = 'organization_id text, repository_id text';

/**
 * Inserts the rows of a batch of `resource`'s lines (linesParameter); `offset`: its lines before this batch (the
 * negative GitHub ids). Returns the rows inserted: fewer than the lines when some name a repository that is not there.
 */
export async function insertRows(db: Db, resource: string, lines: string, offset: number): Promise<number> {
  const target = TARGETS[resource]!;
  const params = [target.inRepository ? REPOSITORY_PARAMS : undefined, target.params].filter(Boolean).join(', ');
  const result = await sql`
    INSERT INTO ${sql.table(target.table)} (${sql.raw(Object.keys(target.columns).join(', '))})
    SELECT ${sql.raw(Object.values(target.columns).join(', '))}
    FROM jsonb_array_elements(${lines}::jsonb) WITH ORDINALITY AS e(v, n)
    CROSS JOIN LATERAL (SELECT ${offset}::bigint AS base) AS o
    CROSS JOIN LATERAL jsonb_to_record(e.v->'record') AS r(${sql.raw(target.record)})
    ${params ? sql`CROSS JOIN LATERAL jsonb_to_record(e.v->'params') AS p(${sql.raw(params)})` : sql``}
    ${target.extra ? sql`CROSS JOIN LATERAL jsonb_to_record(e.v->'extra') AS x(${sql.raw(target.extra)})` : sql``}
    ${target.inRepository ? IN_REPOSITORY : sql``}
    ORDER BY e.n`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

const IN_REPOSITORY = sql`JOIN repositories rep
  ON lower(rep.owner_login) = lower(p.organization_id) AND lower(rep.name) = lower(p.repository_id)`;

/**
 * The leaders of a batch of chapter or project lines: each leader once (known by its name, ignoring case, as the
 * website import knows it by the name's slug; its GitHub login the `key` the detail shows), then the links in the
 * order of the detail's list. Returns the leaders added and the links.
 */
export async function insertLeaders(
  db: Db,
  group: 'chapters' | 'projects',
  lines: string,
): Promise<{ leaders: number; links: number }> {
  const column = sql.ref(group === 'chapters' ? 'chapter_id' : 'project_id');
  const param = group === 'chapters' ? 'chapter_id' : 'project_id';
  const added = await sql`
    INSERT INTO leaders (key, name, github_login)
    SELECT DISTINCT ON (lower(l.name)) lower(l.name), l.name, coalesce(l.key, '')
    FROM jsonb_array_elements(${lines}::jsonb) WITH ORDINALITY AS e(v, n)
    CROSS JOIN LATERAL jsonb_array_elements(e.v->'record'->'leaders') WITH ORDINALITY AS x(v, n)
    CROSS JOIN LATERAL jsonb_to_record(x.v) AS l(key text, name text)
    ORDER BY lower(l.name), e.n, x.n
    ON CONFLICT ((lower(key))) DO NOTHING`.execute(db);
  const links = await sql`
    INSERT INTO entity_leaders (leader_id, ${column}, position)
    SELECT leaders.id, g.id, x.n - 1
    FROM jsonb_array_elements(${lines}::jsonb) WITH ORDINALITY AS e(v, n)
    JOIN ${sql.table(group)} g ON lower(g.key) = lower(e.v->'params'->>${param})
    CROSS JOIN LATERAL jsonb_array_elements(e.v->'record'->'leaders') WITH ORDINALITY AS x(v, n)
    JOIN leaders ON lower(leaders.key) = lower(x.v->>'name')
    ORDER BY e.n, x.n`.execute(db);
  return { leaders: Number(added.numAffectedRows ?? 0), links: Number(links.numAffectedRows ?? 0) };
}

/**
 * The stored health of a batch of project lines, whose projects are written already: the source's as it is (its
 * `extra.health`; null: none computed yet), since the dumps lack inputs of its computation (pull requests, push and
 * close dates: docs/decisions.md). Returns the lines and those without the field (the import refuses them).
 */
export async function insertProjectHealth(db: Db, lines: string): Promise<{ written: number; without: number }> {
  const written = await sql`
    INSERT INTO project_health (project_id, score, bucket, coverage, formula, computed_at, data_version, checks, metrics)
    SELECT g.id, h.score, h.bucket, h.coverage, h.formula, h.computed_at, h.data_version, h.checks, h.metrics
    FROM jsonb_array_elements(${lines}::jsonb) AS e(v)
    JOIN projects g ON lower(g.key) = lower(e.v->'params'->>'project_id')
    CROSS JOIN LATERAL jsonb_to_record(e.v->'extra'->'health') AS h(score float8, bucket text, coverage float8,
      formula text, computed_at timestamptz, data_version bigint, checks jsonb, metrics jsonb)
    WHERE jsonb_typeof(e.v->'extra'->'health') = 'object'`.execute(db);
  const { rows } = await sql<{ without: number }>`
    SELECT count(*)::int AS without FROM jsonb_array_elements(${lines}::jsonb) AS e(v)
    WHERE NOT coalesce(e.v->'extra' ? 'health', false)`.execute(db);
  return { written: Number(written.numAffectedRows ?? 0), without: rows[0]!.without };
}

/** The releases a batch of `snapshot-releases` lines names count in the snapshots: neither drafts nor pre-releases. */
export async function markCountedReleases(db: Db, lines: string): Promise<number> {
  const result = await sql`
    UPDATE releases SET is_draft = false
    FROM (
      SELECT rep.id AS repository_id, p.release_id
      FROM jsonb_array_elements(${lines}::jsonb) AS e(v)
      CROSS JOIN LATERAL jsonb_to_record(e.v->'params') AS p(organization_id text, repository_id text, release_id text)
      ${IN_REPOSITORY}
    ) AS counted
    WHERE releases.repository_id = counted.repository_id AND releases.tag_name = counted.release_id`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * The releases no snapshot counts (still marked drafts): a month up to the last snapshot's was complete when the source
 * last rebuilt them, so its releases that are not counted are drafts (unpublished) or pre-releases; a release of a
 * later month may count once its month is complete (no public field says): it is taken for neither.
 */
export async function settleReleases(db: Db): Promise<void> {
  await sql`UPDATE releases SET is_draft = false
    WHERE is_draft AND created_at > coalesce((SELECT max(end_at) FROM snapshots), '-infinity')`.execute(db);
  await sql`UPDATE releases SET is_draft = false, is_prerelease = true
    WHERE is_draft AND published_at IS NOT NULL`.execute(db);
}

/** The countries of the chapters, for their codes (the `country` filter matches codes). */
export async function chapterCountries(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('chapters').select('country').distinct().where('country', '<>', '').execute();
  return rows.map((row) => row.country);
}

export async function setCountryCodes(db: Db, codes: [country: string, code: string][]): Promise<void> {
  if (codes.length === 0) return;
  await sql`UPDATE chapters SET country_code = c.code
    FROM jsonb_to_recordset(${JSON.stringify(codes.map(([country, code]) => ({ country, code })))}::jsonb)
      AS c(country text, code text)
    WHERE chapters.country = c.country`.execute(db);
}

const DATA_TABLES = [
  'chapters',
  'committees',
  'projects',
  'events',
  'sponsors',
  'leaders',
  'organizations',
  'members',
  'repositories',
  'labels',
  'milestones',
  'issues',
  'releases',
  'snapshots',
  'tombstones',
] as const;

/** The first table of records that has a row; undefined when the database holds no records. */
export async function firstNonEmptyTable(db: Db): Promise<string | undefined> {
  for (const table of DATA_TABLES) {
    const { rows } = await sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM ${sql.table(table)}) AS found`.execute(
      db,
    );
    if (rows[0]?.found) return table;
  }
  return undefined;
}

/** What the report says of the loaded chapters and events: how many have coordinates. */
export async function placedCounts(db: Db): Promise<{ chapters: number; events: number; eventsPlaced: number }> {
  const { rows } = await sql<{ chapters: number; events: number; events_placed: number }>`
    SELECT (SELECT count(*) FROM chapters)::int AS chapters, (SELECT count(*) FROM events)::int AS events,
      (SELECT count(*) FROM events WHERE latitude IS NOT NULL AND longitude IS NOT NULL)::int AS events_placed`.execute(
    db,
  );
  const row = rows[0]!;
  return { chapters: row.chapters, events: row.events, eventsPlaced: row.events_placed };
}
