import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import { stripPrefix } from '../common/id-prefix.ts';
import { columnsOf } from '../common/schemas.ts';
import { CommitteeDetail, CommitteeItem, type CommitteeFilters } from './committees.schemas.ts';

// The contract: lists and details show active committees only; an inactive one is 404 like a missing one.
function activeCommittees(db: Db) {
  return db.selectFrom('committees').where('is_active', '=', true);
}

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const COMMITTEE_ORDERING: OrderingSpec = {
  fields: { created_at: 'created_at', updated_at: 'updated_at' },
  default: '-created_at',
  tieBreaker: 'id',
};

export function listCommittees(db: Db, _query: Static<typeof CommitteeFilters>) {
  return activeCommittees(db).select(columnsOf('committees', CommitteeItem));
}

export function getCommittee(db: Db, committeeId: string) {
  return activeCommittees(db)
    .select(columnsOf('committees', CommitteeDetail))
    .where(sql`lower(key)`, '=', stripPrefix(committeeId, 'www-committee-'))
    .executeTakeFirst();
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleCommittee(db: Db) {
  const value = await firstOf(db, 'committees', 'key', { active: true });
  return value === undefined ? undefined : { committee_id: value };
}
