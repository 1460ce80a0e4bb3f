import { sql, type Kysely } from 'kysely';

// The change log (issue 43, docs/changes.md): every insert, update and delete of a published record becomes one row
// of `changes`, written by row triggers in the transaction that writes the record, whatever wrote it (an import, a
// sync, a DELETE). An update that changes none of the fields the API shows records nothing.
//
// Order: a reader following ids must never miss a change committed later with a lower id. Every transaction that
// records a change holds the write lock (data/base/write-lock.queries.ts; the trigger takes it if the writer did not)
// until it commits, so the ids of one transaction are all below those of the next, which can only begin writing once
// the first is visible. Ids come from a sequence: gaps (a rolled-back transaction) are possible, reordering is not.
// (test/change-log-order.test.ts.) A writer takes the lock before its first write, as every writer of the service
// does: one that leaves it to the trigger holds the rows it wrote (and its table's version row, migration 0010) while
// it waits for the lock at the end of its statement, and may deadlock with one that holds the lock and wants them
// (PostgreSQL then rolls one of them back).
//
// Baseline: a transaction that sets `cds.changes` to `off` (the first import into an empty database, a seeding from
// dumps) records nothing: the dumps are the baseline, their manifest names the last change they include.

/** The API's fields of a resource that are stored as columns of its table (a change names those that changed). */
interface Logged {
  resource: string;
  table: string;
  /** When a row is in the resource's list (as the deletion feed, migration 0010). */
  visible: (row: string) => string;
  /** The record's identity, as in the deletion feed where it has one. */
  key: (row: string) => string;
  /** What follows `/api/v0/<resource>/` in its detail path; NULL when it has none. */
  path: (row: string) => string;
  fields: string[];
  /** More changes when a row's key changes (an UPDATE): those of other records named after it. */
  renamed?: string;
}

const always = () => 'true';
const own = (r: string) => `${r}.key`;
const login = (r: string) => `${r}.login`;
const profiled = (r: string) => `${r}.created_at IS NOT NULL AND ${r}.updated_at IS NOT NULL`;
/**
 * `owner/name` of a row's repository, from the row's own GitHub address (the repository's when that has none). Not
 * from the repository's row: renamed (or moved to another owner), a repository takes a new name at once, while the
 * addresses of its issues, milestones and releases change when the sync writes them again; read from the repository,
 * their `deleted` would then name the new place and the old one would never be told gone.
 */
const repositoryOf = (r: string) =>
  `COALESCE(substring(${r}.url from '^https://github\\.com/([^/]+/[^/]+)/'),
            (SELECT owner_login || '/' || name FROM repositories WHERE id = ${r}.repository_id))`;

export const LOGGED: Logged[] = [
  {
    resource: 'chapters',
    table: 'chapters',
    visible: (r) => `${r}.is_active AND ${r}.latitude IS NOT NULL AND ${r}.longitude IS NOT NULL`,
    key: own,
    path: own,
    fields: ['key', 'name', 'latitude', 'longitude', 'country', 'region', 'created_at', 'updated_at'],
  },
  {
    resource: 'committees',
    table: 'committees',
    visible: (r) => `${r}.is_active`,
    key: own,
    path: own,
    fields: ['key', 'name', 'description', 'created_at', 'updated_at'],
  },
  {
    resource: 'events',
    table: 'events',
    visible: always,
    key: own,
    path: own,
    fields: ['key', 'name', 'description', 'start_date', 'end_date', 'latitude', 'longitude', 'url'],
  },
  {
    resource: 'projects',
    table: 'projects',
    visible: (r) => `${r}.is_active`,
    key: own,
    path: own,
    fields: ['key', 'name', 'level', 'type', 'description', 'created_at', 'updated_at'],
  },
  {
    resource: 'sponsors',
    table: 'sponsors',
    visible: always,
    key: own,
    path: own,
    fields: ['key', 'name', 'sponsor_type', 'description', 'url', 'image_url', 'job_url', 'is_member', 'member_type'],
  },
  {
    resource: 'snapshots',
    table: 'snapshots',
    visible: always,
    key: own,
    path: own,
    fields: [
      'key',
      'title',
      'start_at',
      'end_at',
      'new_chapters_count',
      'new_issues_count',
      'new_projects_count',
      'new_releases_count',
      'new_users_count',
      'created_at',
      'updated_at',
    ],
  },
  {
    resource: 'organizations',
    table: 'organizations',
    visible: profiled,
    key: login,
    path: login,
    fields: ['login', 'name', 'company', 'location', 'created_at', 'updated_at'],
  },
  {
    resource: 'members',
    table: 'members',
    visible: profiled,
    key: login,
    path: login,
    fields: [
      'login',
      'name',
      'avatar_url',
      'url',
      'bio',
      'company',
      'location',
      'title',
      'twitter_username',
      'followers_count',
      'following_count',
      'public_repositories_count',
      'created_at',
      'updated_at',
    ],
  },
  {
    resource: 'repositories',
    table: 'repositories',
    visible: always,
    key: (r) => `${r}.owner_login || '/' || ${r}.name`,
    path: (r) => `${r}.owner_login || '/' || ${r}.name`,
    // Labels have no address of their own: their key is their repository's name and theirs (below). A repository
    // renamed or moved renames them, one `deleted` and one `created` each.
    renamed: `INSERT INTO changes (resource, action, key, path, data_version, changed_fields)
      SELECT 'labels', step.action, step.owner || '/' || l.name, NULL, version, NULL
      FROM (VALUES (1, 'deleted', OLD.owner_login || '/' || OLD.name), (2, 'created', NEW.owner_login || '/' || NEW.name))
        AS step (n, action, owner)
      CROSS JOIN labels l WHERE l.repository_id = NEW.id ORDER BY step.n, l.id;`,
    fields: [
      'name',
      'description',
      'commits_count',
      'contributors_count',
      'forks_count',
      'stars_count',
      'open_issues_count',
      'created_at',
      'updated_at',
    ],
  },
  {
    resource: 'issues',
    table: 'issues',
    visible: always,
    key: (r) => `${r}.url`,
    path: (r) => `${repositoryOf(r)} || '/' || ${r}.number`,
    fields: ['title', 'state', 'body', 'url', 'created_at', 'updated_at'],
  },
  {
    resource: 'milestones',
    table: 'milestones',
    visible: always,
    key: (r) => `${r}.url`,
    path: (r) => `${repositoryOf(r)} || '/' || ${r}.number`,
    fields: [
      'number',
      'title',
      'state',
      'body',
      'url',
      'open_issues_count',
      'closed_issues_count',
      'due_on',
      'created_at',
      'updated_at',
    ],
  },
  {
    resource: 'releases',
    table: 'releases',
    visible: always,
    key: (r) => `${repositoryOf(r)} || '/' || ${r}.tag_name`,
    path: (r) => `${repositoryOf(r)} || '/' || ${r}.tag_name`,
    fields: ['name', 'tag_name', 'description', 'published_at', 'created_at'],
  },
  {
    resource: 'labels',
    table: 'labels',
    visible: always,
    // Labels have no address of their own: when their repository went in the same statement, their GitHub id.
    key: (r) =>
      `COALESCE((SELECT owner_login || '/' || name FROM repositories WHERE id = ${r}.repository_id) || '/' || ${r}.name,
                'github:' || ${r}.github_id)`,
    path: () => 'NULL',
    fields: ['name', 'description', 'color'],
  },
];

/**
 * The data version of the calling transaction: bumped once per transaction (a second call returns the first's), under
 * the write lock. Every change's `data_version` is the version its transaction commits with.
 */
const BUMP_DATA_VERSION = `
  CREATE OR REPLACE FUNCTION cds_bump_data_version() RETURNS bigint LANGUAGE plpgsql AS $$
  DECLARE
    held text := current_setting('cds.data_version_tx', true);
    version bigint;
  BEGIN
    IF held IS NOT NULL AND split_part(held, ':', 1) = txid_current()::text THEN
      RETURN split_part(held, ':', 2)::bigint;
    END IF;
    PERFORM pg_advisory_xact_lock(727001);
    INSERT INTO app_meta (key, value) VALUES ('data_version', '1')
      ON CONFLICT (key) DO UPDATE SET value = to_jsonb((app_meta.value #>> '{}')::bigint + 1), updated_at = now()
      RETURNING (value #>> '{}')::bigint INTO version;
    PERFORM set_config('cds.data_version_tx', txid_current()::text || ':' || version, true);
    RETURN version;
  END $$;`;

function changeFunction({ resource, visible, key, path, fields, renamed }: Logged): string {
  const changed = fields
    .map((field) => `CASE WHEN NEW.${field} IS DISTINCT FROM OLD.${field} THEN '${field}' END`)
    .join(',\n          ');
  // The data version first: it takes the write lock before the change takes its id from the sequence.
  const insert = (row: string, action: string, changedFields: string) =>
    `version := cds_bump_data_version();
     INSERT INTO changes (resource, action, key, path, data_version, changed_fields)
       VALUES ('${resource}', '${action}', ${key(row)}, ${path(row)}, version, ${changedFields});`;
  return `
    CREATE OR REPLACE FUNCTION cds_change_${resource}() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      was boolean := TG_OP <> 'INSERT' AND (${visible('OLD')});
      now_in boolean := TG_OP <> 'DELETE' AND (${visible('NEW')});
      fields text[];
      version bigint;
    BEGIN
      IF was AND now_in AND ${key('OLD')} IS NOT DISTINCT FROM ${key('NEW')} THEN
        fields := array_remove(ARRAY[
          ${changed}
        ]::text[], NULL);
        IF cardinality(fields) > 0 THEN ${insert('NEW', 'updated', 'fields')} END IF;
        RETURN NULL;
      END IF;
      IF was THEN ${insert('OLD', 'deleted', 'NULL')} END IF;
      IF now_in THEN ${insert('NEW', 'created', 'NULL')} END IF;
      ${renamed ? `IF was AND now_in THEN ${renamed} END IF;` : ''}
      RETURN NULL;
    END $$;`;
}

/**
 * The `leaders` of a chapter or project are rows of their own (entity_leaders, leaders): a link added, removed or moved,
 * or a leader's name or GitHub login changed, is an update of each visible chapter and project it leads, naming
 * `leaders`; once per record and transaction (and not at all for a record created in the same transaction).
 */
const LEADERS = `
  CREATE OR REPLACE FUNCTION cds_change_leaders_of(chapter_ids bigint[], project_ids bigint[]) RETURNS void
  LANGUAGE plpgsql AS $$
  DECLARE
    led record;
    version bigint;
  BEGIN
    FOR led IN
      SELECT 'chapters' AS resource, c.key FROM chapters c
        WHERE c.id = ANY(chapter_ids) AND c.is_active AND c.latitude IS NOT NULL AND c.longitude IS NOT NULL
      UNION ALL
      SELECT 'projects', p.key FROM projects p WHERE p.id = ANY(project_ids) AND p.is_active
    LOOP
      version := cds_bump_data_version();
      IF NOT EXISTS (SELECT 1 FROM changes WHERE resource = led.resource AND key = led.key AND data_version = version
                       AND (action = 'created' OR changed_fields = ARRAY['leaders'])) THEN
        INSERT INTO changes (resource, action, key, path, data_version, changed_fields)
          VALUES (led.resource, 'updated', led.key, led.key, version, ARRAY['leaders']);
      END IF;
    END LOOP;
  END $$;

  CREATE OR REPLACE FUNCTION cds_change_entity_leaders() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      PERFORM cds_change_leaders_of(ARRAY[NEW.chapter_id], ARRAY[NEW.project_id]);
    ELSIF TG_OP = 'DELETE' THEN
      PERFORM cds_change_leaders_of(ARRAY[OLD.chapter_id], ARRAY[OLD.project_id]);
    ELSE
      PERFORM cds_change_leaders_of(ARRAY[OLD.chapter_id, NEW.chapter_id], ARRAY[OLD.project_id, NEW.project_id]);
    END IF;
    RETURN NULL;
  END $$;

  CREATE OR REPLACE FUNCTION cds_change_leaders() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM cds_change_leaders_of(
      ARRAY(SELECT chapter_id FROM entity_leaders WHERE leader_id = NEW.id AND chapter_id IS NOT NULL),
      ARRAY(SELECT project_id FROM entity_leaders WHERE leader_id = NEW.id AND project_id IS NOT NULL));
    RETURN NULL;
  END $$;`;

const RECORDING = `current_setting('cds.changes', true) IS DISTINCT FROM 'off'`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE changes (
      id bigserial PRIMARY KEY,
      resource text NOT NULL,
      action text NOT NULL CHECK (action IN ('created', 'updated', 'deleted')),
      key text NOT NULL,
      path text,
      occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      data_version bigint NOT NULL,
      changed_fields text[]
    );
    CREATE INDEX changes_resource_idx ON changes (resource, id);
    CREATE INDEX changes_key_idx ON changes (resource, key, id);
    CREATE INDEX changes_occurred_at_idx ON changes (occurred_at);
  `.execute(db);
  await sql.raw(BUMP_DATA_VERSION).execute(db);
  await sql.raw(LEADERS).execute(db);
  await sql
    .raw(
      `CREATE TRIGGER cds_change_links AFTER INSERT OR DELETE ON entity_leaders
         FOR EACH ROW WHEN (${RECORDING}) EXECUTE FUNCTION cds_change_entity_leaders();
       CREATE TRIGGER cds_change_moved AFTER UPDATE ON entity_leaders
         FOR EACH ROW WHEN (${RECORDING} AND OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION cds_change_entity_leaders();
       CREATE TRIGGER cds_change_renamed AFTER UPDATE ON leaders
         FOR EACH ROW WHEN (${RECORDING} AND (OLD.name, OLD.github_login) IS DISTINCT FROM (NEW.name, NEW.github_login))
         EXECUTE FUNCTION cds_change_leaders();`,
    )
    .execute(db);
  for (const logged of LOGGED) {
    await sql.raw(changeFunction(logged)).execute(db);
    const fn = `cds_change_${logged.resource}()`;
    await sql
      .raw(
        `CREATE TRIGGER cds_change_insert AFTER INSERT ON ${logged.table}
           FOR EACH ROW WHEN (${RECORDING}) EXECUTE FUNCTION ${fn};
         CREATE TRIGGER cds_change_update AFTER UPDATE ON ${logged.table}
           FOR EACH ROW WHEN (${RECORDING} AND OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION ${fn};
         CREATE TRIGGER cds_change_delete AFTER DELETE ON ${logged.table}
           FOR EACH ROW WHEN (${RECORDING}) EXECUTE FUNCTION ${fn};`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { resource, table } of LOGGED) {
    await sql
      .raw(
        `DROP TRIGGER IF EXISTS cds_change_insert ON ${table}; DROP TRIGGER IF EXISTS cds_change_update ON ${table};
         DROP TRIGGER IF EXISTS cds_change_delete ON ${table}; DROP FUNCTION IF EXISTS cds_change_${resource}();`,
      )
      .execute(db);
  }
  await sql`
    DROP TRIGGER IF EXISTS cds_change_links ON entity_leaders; DROP TRIGGER IF EXISTS cds_change_moved ON entity_leaders;
    DROP TRIGGER IF EXISTS cds_change_renamed ON leaders;
    DROP FUNCTION IF EXISTS cds_change_entity_leaders(); DROP FUNCTION IF EXISTS cds_change_leaders();
    DROP FUNCTION IF EXISTS cds_change_leaders_of(bigint[], bigint[]);
    DROP FUNCTION IF EXISTS cds_bump_data_version(); DROP TABLE IF EXISTS changes;`.execute(db);
}
