import { sql, type Kysely } from 'kysely';

// The edge's purge queue (issue 44, docs/edge.md): one row, the purge's cursor in the change log. Whoever holds its
// lease (`lease_owner` until `lease_until`, one short UPDATE: no session lock, so it works through PgBouncer in
// transaction mode) purges the tags of the changes after `purged_through`, and moves the cursor only once the purge API
// said yes; a failure puts the next attempt off (`next_attempt_at`), never the cursor forward.
//
// Each range is purged a second time once every instance has heard of its data version (`settled_through` up to
// `settle_upto`, due at `settle_due_at`): an answer an instance built from the old data while the first purge went out
// would otherwise stay at the edge. `extra_tags` are tags asked for outside the log (the dumps after a build, `*` for
// everything); `baselines_seen` is the count of baselines (writes without changes, data/base/baseline.queries.ts)
// already answered with a purge of everything. The row is made by the first instance that purges.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE edge_purge (
      id integer PRIMARY KEY CHECK (id = 1),
      purged_through bigint NOT NULL,
      purged_at timestamptz,
      settled_through bigint NOT NULL,
      settle_upto bigint NOT NULL,
      settle_due_at timestamptz,
      extra_tags text[] NOT NULL DEFAULT '{}',
      baselines_seen bigint NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      failing_since timestamptz,
      failed_attempts integer NOT NULL DEFAULT 0,
      lease_owner text,
      lease_until timestamptz
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE edge_purge;`.execute(db);
}
