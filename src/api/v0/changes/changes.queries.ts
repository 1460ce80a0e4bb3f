import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { AppError } from '../../../errors.ts';
import { LOGGED_RESOURCES, type ChangeFilter } from '../../../changes/change-log.ts';
import { changeConditions, readRetention } from '../../../changes/change-log.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';

/** Oldest first, by id alone: the order the changes committed in (migration 0014). */
export const CHANGES_ORDERING: OrderingSpec = {
  fields: { id: 'changes.id' },
  default: 'id',
  tieBreaker: 'changes.id',
};

export const CHANGES_GROUPS: GroupFields = { resource: { value: 'changes.resource' } };

/** Where a reader starts again when what it asks for is gone: the dumps, then the changes after their last id. */
export const DUMPS_PATH = '/api/v0/dumps/';

// `chapter.updated` from the row's resource and action, as toChange (change-log.queries.ts) makes it.
const singular = sql.join(
  Object.entries(LOGGED_RESOURCES).map(([resource, name]) => sql`when ${sql.lit(resource)} then ${sql.lit(name)}`),
  sql` `,
);

/** The changes that pass the filter, with the item's fields (ChangeItem), unordered and unpaged. */
export function listChanges(db: Db, filter: ChangeFilter) {
  return db
    .selectFrom('changes')
    .select([
      'changes.id',
      sql<string>`(case changes.resource ${singular} end) || '.' || changes.action`.as('type'),
      'changes.resource',
      'changes.key',
      'changes.occurred_at',
      'changes.data_version',
      'changes.changed_fields',
      sql<string | null>`'/api/v0/' || changes.resource || '/' || changes.path`.as('url'),
    ])
    .where((eb) => changeConditions(eb, filter));
}

/** 410: the changes a reader asks for were removed by retention (CHANGES_RETENTION_DAYS). */
export class ChangesGoneError extends AppError {
  constructor(body: { oldest_id: number | null; pruned_through: number; pruned_before: string | null }) {
    super(410, {
      message:
        `Gone: the changes through id ${body.pruned_through} were removed (CHANGES_RETENTION_DAYS)` +
        `${body.oldest_id === null ? '' : `; the oldest kept is ${body.oldest_id}`}. Start again from the dumps ` +
        `(${DUMPS_PATH}), then follow the changes after their manifest's last_change_id.`,
      ...body,
      dumps: DUMPS_PATH,
    });
  }
}

/**
 * Throws ChangesGoneError when the filter asks for changes retention removed: after an id below the last one removed
 * (`after`) and from a time before the last pruning's cut-off (`since`), either alone or both. (Both given: a change
 * removed is missed only if it passes both.) A filter with neither reads what is kept.
 */
export async function assertRetained(db: Db, filter: ChangeFilter): Promise<void> {
  if (filter.after === undefined && filter.since === undefined) return;
  const retention = await readRetention(db);
  if (retention.prunedBefore === undefined) return;
  const afterGone = filter.after === undefined || filter.after < retention.prunedThrough;
  const sinceGone = filter.since === undefined || filter.since < retention.prunedBefore;
  if (!afterGone || !sinceGone) return;
  throw new ChangesGoneError({
    oldest_id: retention.oldestId ?? null,
    pruned_through: retention.prunedThrough,
    pruned_before: retention.prunedBefore?.toISOString() ?? null,
  });
}
