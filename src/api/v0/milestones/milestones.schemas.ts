import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../common/schemas.ts';
import { RepositoryPath, RepositoryScopeFilters } from '../repositories/repositories.schemas.ts';
import { State } from '../issues/issues.schemas.ts';
import { NUMBER_RANGE } from '../common/params.ts';

export const MilestoneItem = Type.Object(
  {
    number: Type.Integer(),
    title: Type.String(),
    state: State(),
    url: Type.String({ description: 'Address on GitHub.' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'MilestoneListItem' },
);

export const MilestoneDetail = Type.Object(
  {
    number: Type.Integer(),
    title: Type.String(),
    state: State(),
    body: Type.String(),
    url: Type.String({ description: 'Address on GitHub.' }),
    open_issues_count: Type.Integer(),
    closed_issues_count: Type.Integer(),
    due_on: Nullable(DateTime('Null when there is no due date.')),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'Milestone' },
);

export const MilestoneFilters = Type.Object({
  ...RepositoryScopeFilters,
  state: Type.Optional(State('`open` or `closed`, case-insensitive.')),
});

export const MilestoneParams = Type.Object({
  ...RepositoryPath,
  milestone_id: Type.Integer({ ...NUMBER_RANGE, description: 'Milestone number.' }),
});
