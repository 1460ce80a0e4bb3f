import { Type } from '@sinclair/typebox';
import { DateTime } from '../common/schemas.ts';
import { TOMBSTONED } from '../../../db/migrations/0010_tombstones.ts';

export const TOMBSTONED_RESOURCES = TOMBSTONED.map((t) => t.resource);

export const DeletedFilters = Type.Object({
  resource: Type.Optional(
    Type.Unsafe<string>(
      Type.String({
        enum: TOMBSTONED_RESOURCES,
        description: 'Only the records that left this list (its path segment, e.g. `chapters`).',
      }),
    ),
  ),
});

export const DeletedItem = Type.Object(
  {
    resource: Type.String({ description: 'The list the record left: `chapters`, `repositories`, `issues`, …' }),
    key: Type.String({
      description:
        "The record's identity as its list item shows it: `key` (chapters, committees, projects), `login` (members, " +
        'organizations), `owner/name` (repositories), `url` (issues, milestones).',
    }),
    deleted_at: DateTime('When the record left its list (made inactive, unpublished, deleted).'),
  },
  { title: 'DeletedListItem' },
);
