import { Type } from '@sinclair/typebox';
import type { IssueState } from '../../../db/schema.ts';
import { DateTime } from '../common/schemas.ts';
import { RepositoryPath, RepositoryScopeFilters } from '../repositories/repositories.schemas.ts';
import { NUMBER_RANGE } from '../common/params.ts';

/** `open` or `closed`, for issues and milestones. A plain enum keeps validation to one clear error. */
export const State = (description?: string) =>
  Type.Unsafe<IssueState>(Type.String({ enum: ['open', 'closed'], ...(description ? { description } : {}) }));

export const IssueItem = Type.Object(
  {
    title: Type.String(),
    state: State(),
    url: Type.String({ description: 'Address on GitHub.' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'IssueListItem' },
);

export const IssueDetail = Type.Object(
  {
    title: Type.String(),
    state: State(),
    body: Type.String(),
    url: Type.String({ description: 'Address on GitHub.' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'Issue' },
);

export const IssueFilters = Type.Object({
  ...RepositoryScopeFilters,
  state: Type.Optional(State('`open` or `closed`, case-insensitive.')),
});

export const IssueParams = Type.Object({
  ...RepositoryPath,
  issue_id: Type.Integer({ ...NUMBER_RANGE, description: 'Issue number.' }),
});
