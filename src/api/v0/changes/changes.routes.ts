import { resource } from '../common/resource.ts';
import { ChangeFilters, changeFilterOf } from './changes.filters.ts';
import { ChangeItem, ChangesGoneBody } from './changes.schemas.ts';
import { assertRetained, CHANGES_GROUPS, CHANGES_ORDERING, listChanges } from './changes.queries.ts';

/**
 * `X-Poll-Interval` of every answer of the feed: how many seconds a reader waits before asking again. Changes come in
 * batches (imports, the scheduled syncs); a reader that got a full page (`Link: next`) follows it at once instead.
 */
export const POLL_INTERVAL_SECONDS = 60;

export const changes = resource('changes', 'Change', {
  summary: 'List changes',
  description:
    'The change log (docs/changes.md): one item per insert, update or delete of a published record of every list, ' +
    'oldest first. Follow it with `after` (the greatest `id` read) and the cursor of `Link: next`; wait ' +
    '`X-Poll-Interval` seconds between polls, sending the last `ETag` in `If-None-Match` (a 304 costs nothing against ' +
    'the rate limit). Changes are kept `CHANGES_RETENTION_DAYS` days: asking before what is kept is 410, naming the ' +
    'oldest id kept; start again from the dumps (`/api/v0/dumps/`, their manifest names `last_change_id`).',
  list: {
    filters: ChangeFilters,
    item: ChangeItem,
    ordering: CHANGES_ORDERING,
    groups: CHANGES_GROUPS,
    headers: {
      'X-Poll-Interval': {
        value: String(POLL_INTERVAL_SECONDS),
        description:
          'Seconds to wait before polling again (unless `Link` has a `next` page: follow it at once). A poll with ' +
          '`If-None-Match` that finds nothing new is a 304.',
      },
    },
    responses: { 410: ChangesGoneBody },
    query: async (db, query) => {
      const filter = changeFilterOf(query);
      await assertRetained(db, filter);
      return listChanges(db, filter);
    },
  },
  // None: the dumps are the baseline the changes follow (their manifest's last_change_id), not a copy of the log.
  dumps: [],
});
