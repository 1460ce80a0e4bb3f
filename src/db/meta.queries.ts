import { sql } from 'kysely';
import type { Db } from './index.ts';

/** Increments a counter kept in app_meta (created at 1) and returns its new value. */
export async function bumpMetaCounter(db: Db, key: string): Promise<number> {
  const row = await db
    .insertInto('app_meta')
    .values({ key, value: '1' })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ value: sql`to_jsonb((app_meta.value #>> '{}')::bigint + 1)`, updated_at: sql`now()` }),
    )
    .returning(sql<string>`value #>> '{}'`.as('value'))
    .executeTakeFirstOrThrow();
  return Number(row.value);
}

export async function readMetaCounter(db: Db, key: string): Promise<number> {
  const row = await db
    .selectFrom('app_meta')
    .select(sql<string>`value #>> '{}'`.as('value'))
    .where('key', '=', key)
    .executeTakeFirst();
  return row ? Number(row.value) : 0;
}

// Named for its first user, the dumps; databases already hold it under this key.
const DATABASE_ID = 'dumps_database';

/**
 * A random id of this database, kept in app_meta (created by the first dumps build): a dumps folder's manifest names the
 * database it was built from, so that a folder left by another database is never served or reused as this one's.
 */
export async function readDatabaseId(db: Db): Promise<string | undefined> {
  const row = await db
    .selectFrom('app_meta')
    .select(sql<string>`value #>> '{}'`.as('id'))
    .where('key', '=', DATABASE_ID)
    .executeTakeFirst();
  return row?.id;
}

/** This database's id, created when it has none yet. */
export async function createDatabaseId(db: Db): Promise<string> {
  await db
    .insertInto('app_meta')
    .values({ key: DATABASE_ID, value: sql`to_jsonb(gen_random_uuid()::text)` as never })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  return (await readDatabaseId(db))!;
}
