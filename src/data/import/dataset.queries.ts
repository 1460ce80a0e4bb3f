// SQL of the dataset import (dataset.import.ts) that is not about one kind of record.
import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';

/** Refreshes the planner's statistics of every table. */
export async function analyzeAll(db: Db): Promise<void> {
  await sql`ANALYZE`.execute(db);
}

/** Lifts the statement timeout for the rest of the transaction (a bulk load's set-based statements). */
export async function noStatementTimeout(trx: Db): Promise<void> {
  await sql`SET LOCAL statement_timeout = 0`.execute(trx);
}
