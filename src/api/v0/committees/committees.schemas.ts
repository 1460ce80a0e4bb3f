import { Type } from '@sinclair/typebox';
import { DateTime } from '../common/schemas.ts';

const Key = () => Type.String({ description: 'Committee key, without the `www-committee-` prefix.' });

export const CommitteeItem = Type.Object(
  {
    key: Key(),
    name: Type.String(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'CommitteeListItem' },
);

export const CommitteeDetail = Type.Object(
  {
    key: Key(),
    name: Type.String(),
    description: Type.String(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'Committee' },
);

// The interface gives the committees list no filters.
export const CommitteeFilters = Type.Object({});

export const CommitteeParams = Type.Object({
  committee_id: Type.String({ maxLength: 200, description: 'The key, with or without the `www-committee-` prefix.' }),
});
