import { Type } from '@sinclair/typebox';
import { DateTime } from '../common/schemas.ts';

export const LabelItem = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    color: Type.String({ description: 'Six lower-case hex digits, without `#`.' }),
  },
  { title: 'LabelListItem' },
);

export const LabelFilters = Type.Object({
  color: Type.Optional(
    Type.String({ pattern: '^[0-9A-Fa-f]{6}$', description: 'Hex color without `#` (six digits), case-insensitive.' }),
  ),
});

/** What the dump carries besides the item (common/dumps.ts): the orderings `nest_created_at`, `nest_updated_at`. */
export const LabelStored = Type.Object({ nest_created_at: DateTime(), nest_updated_at: DateTime() });
