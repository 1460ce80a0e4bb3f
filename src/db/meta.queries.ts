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
