import { sql, type Kysely } from 'kysely';

// An index behind every filter × ordering of the lists of large tables (issue 12): each starts with the
// columns a filter fixes by equality and goes on with the first ordering column and the id tie-breaker,
// so a page reads `limit` rows in index order (forwards or backwards) and stops; a second ordering term
// is an Incremental Sort of rows that share the first one, never a sort of the table. The lists of
// small tables (chapters, committees, projects, events, sponsors: hundreds of rows) keep sorting.
const INDEXES: [name: string, definition: string][] = [
  // issues and milestones: by repository (a scalar subquery resolves it, see whereInRepositories), by state, both.
  ...['issues', 'milestones'].flatMap((table) =>
    ['created_at', 'updated_at'].flatMap((column): [string, string][] => [
      [`${table}_state_${column}_idx`, `${table} (state, ${column}, id)`],
      [`${table}_repository_${column}_idx`, `${table} (repository_id, ${column}, id)`],
      [`${table}_repository_state_${column}_idx`, `${table} (repository_id, state, ${column}, id)`],
    ]),
  ),
  // releases: by repository, by tag name.
  ...['published_at', 'created_at'].flatMap((column): [string, string][] => [
    [`releases_repository_${column}_idx`, `releases (repository_id, ${column}, id)`],
    [`releases_tag_name_${column}_idx`, `releases (tag_name, ${column}, id)`],
  ]),
  // members: unfiltered by login and name; by company, by location, each of the four orderings.
  ['members_login_order_idx', 'members (login, id)'],
  ['members_name_order_idx', 'members (name, id)'],
  ...['company', 'location'].flatMap((filter) =>
    ['created_at', 'updated_at', 'login', 'name'].map((column): [string, string] => [
      `members_${filter}_${column}_idx`,
      `members ((lower(${filter})), ${column}, id)`,
    ]),
  ),
  // repositories by organization (owner login); organizations by location; labels by color.
  ['repositories_owner_created_at_idx', 'repositories ((lower(owner_login)), created_at, id)'],
  ['repositories_owner_updated_at_idx', 'repositories ((lower(owner_login)), updated_at, id)'],
  ['organizations_location_created_at_idx', 'organizations ((lower(location)), created_at, id)'],
  ['organizations_location_updated_at_idx', 'organizations ((lower(location)), updated_at, id)'],
  ['labels_color_nest_created_at_idx', 'labels (color, nest_created_at, id)'],
  ['labels_color_nest_updated_at_idx', 'labels (color, nest_updated_at, id)'],
];

// A version per table, moved by a statement-level trigger on every write (one row update per statement,
// not per row), so that the cached counts of the lists are dropped only for the tables that changed
// (docs/counts.md). A table without the trigger is never trusted: counts reading it go with any change.
const VERSIONED = [
  'chapters',
  'committees',
  'projects',
  'events',
  'sponsors',
  'organizations',
  'members',
  'organization_members',
  'repositories',
  'milestones',
  'issues',
  'labels',
  'issue_labels',
  'issue_assignees',
  'releases',
  'leaders',
  'entity_leaders',
  'snapshots',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, definition] of INDEXES)
    await sql.raw(`CREATE INDEX IF NOT EXISTS ${name} ON ${definition}`).execute(db);
  await sql`
    CREATE TABLE table_versions (
      table_name text PRIMARY KEY,
      version bigint NOT NULL DEFAULT 0
    );
    CREATE FUNCTION cds_bump_table_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO table_versions (table_name, version) VALUES (TG_TABLE_NAME, 1)
        ON CONFLICT (table_name) DO UPDATE SET version = table_versions.version + 1;
      RETURN NULL;
    END $$;
  `.execute(db);
  for (const table of VERSIONED) {
    await sql
      .raw(
        `CREATE TRIGGER cds_table_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION cds_bump_table_version()`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of VERSIONED) await sql.raw(`DROP TRIGGER IF EXISTS cds_table_version ON ${table}`).execute(db);
  await sql`DROP FUNCTION IF EXISTS cds_bump_table_version(); DROP TABLE IF EXISTS table_versions`.execute(db);
  for (const [name] of INDEXES) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
}
