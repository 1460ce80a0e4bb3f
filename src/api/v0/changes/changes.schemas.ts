import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../common/schemas.ts';

/** One change of the log (src/changes/change-log.ts, Change): the item of the pull feed, the stream's `data:`. */
export const ChangeItem = Type.Object(
  {
    id: Type.Integer({
      description: 'Increasing: a reader that follows ids (`after`) never misses a change committed later.',
    }),
    type: Type.String({
      description:
        'The singular resource name and `created`, `updated` or `deleted`: `chapter.updated`, `issue.created`.',
    }),
    resource: Type.String({ description: 'The list the record is in (or left): `chapters`, `issues`, …' }),
    key: Type.String({
      description:
        "The record's identity, as in the deletion feed: a chapter's `key`, a member's `login`, a repository's " +
        "`owner/name`, an issue's `url`, a release's `owner/name/tag_name`.",
    }),
    occurred_at: DateTime('When the change was written.'),
    data_version: Type.Integer({ description: 'The data version the write committed with.' }),
    changed_fields: Nullable(
      Type.Array(Type.String(), { description: 'The fields of the record that changed: `updated` only.' }),
    ),
    url: Nullable(Type.String({ description: "The record's detail path; null for a resource without one (labels)." })),
  },
  { title: 'ChangeListItem' },
);

/** The 410 of a reader asking before what the log still keeps (`CHANGES_RETENTION_DAYS`). */
export const ChangesGoneBody = Type.Object(
  {
    message: Type.String(),
    oldest_id: Nullable(Type.Integer({ description: 'The oldest change kept (null when none is).' })),
    pruned_through: Type.Integer({ description: 'The last id removed by retention.' }),
    pruned_before: Nullable(DateTime('Changes before this time may have been removed.')),
    dumps: Type.String({
      description: 'Where to start again: the dumps, then the changes after their `last_change_id`.',
    }),
  },
  { title: 'ChangesGone' },
);
