import { sql, type Kysely } from 'kysely';

// Incremental consumption (issue 17, docs/incremental.md): a record that leaves a list leaves a tombstone,
// so that a consumer who reads `?updated_after=` also learns what disappeared (`GET /api/v0/deleted/`).
// Row triggers write them, whatever removed the record: an import deactivating a chapter, a DELETE, a
// member losing its GitHub profile. A record that comes back into its list takes its tombstone away.

/** The lists that get tombstones: the resource name, when a row is in the list, and its public identity. */
export const TOMBSTONED: { resource: string; visible: (row: string) => string; key: (row: string) => string }[] = [
  {
    resource: 'chapters',
    visible: (r) => `${r}.is_active AND ${r}.latitude IS NOT NULL AND ${r}.longitude IS NOT NULL`,
    key: (r) => `${r}.key`,
  },
  { resource: 'committees', visible: (r) => `${r}.is_active`, key: (r) => `${r}.key` },
  { resource: 'projects', visible: (r) => `${r}.is_active`, key: (r) => `${r}.key` },
  {
    resource: 'members',
    visible: (r) => `${r}.created_at IS NOT NULL AND ${r}.updated_at IS NOT NULL`,
    key: (r) => `${r}.login`,
  },
  {
    resource: 'organizations',
    visible: (r) => `${r}.created_at IS NOT NULL AND ${r}.updated_at IS NOT NULL`,
    key: (r) => `${r}.login`,
  },
  { resource: 'repositories', visible: () => 'true', key: (r) => `${r}.owner_login || '/' || ${r}.name` },
  { resource: 'issues', visible: () => 'true', key: (r) => `${r}.url` },
  { resource: 'milestones', visible: () => 'true', key: (r) => `${r}.url` },
];

// One bump of a table's version per transaction is enough (readers see committed versions only). Without this, a
// row trigger writing tombstones one statement at a time (a DELETE cascading to 30k issues) updated the same
// table_versions row 30k times in one transaction, each update slower than the last.
const BUMP_ONCE = `
  CREATE OR REPLACE FUNCTION cds_bump_table_version() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF current_setting('cds.bumped_' || TG_TABLE_NAME, true) = txid_current()::text THEN RETURN NULL; END IF;
    PERFORM set_config('cds.bumped_' || TG_TABLE_NAME, txid_current()::text, true);
    INSERT INTO table_versions (table_name, version) VALUES (TG_TABLE_NAME, 1)
      ON CONFLICT (table_name) DO UPDATE SET version = table_versions.version + 1;
    RETURN NULL;
  END $$;`;

const BUMP_EVERY = `
  CREATE OR REPLACE FUNCTION cds_bump_table_version() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO table_versions (table_name, version) VALUES (TG_TABLE_NAME, 1)
      ON CONFLICT (table_name) DO UPDATE SET version = table_versions.version + 1;
    RETURN NULL;
  END $$;`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(BUMP_ONCE).execute(db);
  await sql`
    CREATE TABLE tombstones (
      id bigserial PRIMARY KEY,
      resource text NOT NULL,
      key text NOT NULL,
      deleted_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX tombstones_resource_key_idx ON tombstones (resource, key);
    CREATE INDEX tombstones_deleted_at_idx ON tombstones (deleted_at, id);
    CREATE INDEX tombstones_resource_deleted_at_idx ON tombstones (resource, deleted_at, id);
    CREATE TRIGGER cds_table_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tombstones
      FOR EACH STATEMENT EXECUTE FUNCTION cds_bump_table_version();
  `.execute(db);
  for (const { resource, visible, key } of TOMBSTONED) {
    // Gone: was in the list and is not any more (or is there under another identity). Back: in the list now.
    await sql
      .raw(
        `CREATE FUNCTION cds_tombstone_${resource}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP <> 'INSERT' AND (${visible('OLD')})
             AND (TG_OP = 'DELETE' OR NOT (${visible('NEW')}) OR ${key('OLD')} IS DISTINCT FROM ${key('NEW')}) THEN
            INSERT INTO tombstones (resource, key) VALUES ('${resource}', ${key('OLD')})
              ON CONFLICT (resource, key) DO UPDATE SET deleted_at = now();
          END IF;
          IF TG_OP <> 'DELETE' AND (${visible('NEW')})
             AND (TG_OP = 'INSERT' OR NOT (${visible('OLD')}) OR ${key('OLD')} IS DISTINCT FROM ${key('NEW')})
             -- Looked up first: a DELETE statement per row would fire cds_table_version per row (one update of the
             -- same table_versions row per inserted record: 30k issues took 60 s instead of 2 s).
             AND EXISTS (SELECT 1 FROM tombstones WHERE resource = '${resource}' AND key = ${key('NEW')}) THEN
            DELETE FROM tombstones WHERE resource = '${resource}' AND key = ${key('NEW')};
          END IF;
          RETURN NULL;
        END $$;
        CREATE TRIGGER cds_tombstone AFTER INSERT OR UPDATE OR DELETE ON ${resource}
          FOR EACH ROW EXECUTE FUNCTION cds_tombstone_${resource}();`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { resource } of TOMBSTONED) {
    await sql
      .raw(`DROP TRIGGER IF EXISTS cds_tombstone ON ${resource}; DROP FUNCTION IF EXISTS cds_tombstone_${resource}();`)
      .execute(db);
  }
  await sql`DROP TABLE IF EXISTS tombstones`.execute(db);
  await sql.raw(BUMP_EVERY).execute(db);
}
