import { Type } from '@sinclair/typebox';

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
