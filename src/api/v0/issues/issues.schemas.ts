import { Type } from '@sinclair/typebox';
import type { IssueState } from '../../../db/schema.ts';
import { BooleanFilter, DateTime, StringFilter } from '../common/schemas.ts';
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

/** A repeatable label: the issues that carry any of those given, names compared by their key (docs/contribute.md). */
export const LabelFilter = (description: string) =>
  Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 20,
      description:
        `${description} Case, whitespace, hyphens and underscores are ignored (\`good-first-issue\`, \`Good First ` +
        'Issue` and `good_first_issue` are one label); repeat the parameter for several (`label=bug&label=docs`: either).',
    }),
  );

/** The filters of the issues list that GET /api/v0/contribute/ shares (issue-filters.queries.ts). */
export const ContributeSharedFilters = {
  language: StringFilter("The repository's language, case-insensitive exact match (`Python`)."),
  project: StringFilter(
    'A project key (with or without `www-project-`): the issues of the repositories that project names.',
  ),
};

export const IssueFilters = Type.Object({
  ...RepositoryScopeFilters,
  state: Type.Optional(State('`open` or `closed`, case-insensitive.')),
  label: LabelFilter('Issues carrying this label.'),
  is_assigned: BooleanFilter('`true`: issues with at least one assignee; `false`: issues with none.'),
  has_comments: BooleanFilter('`true`: issues with at least one comment; `false`: issues with none.'),
  ...ContributeSharedFilters,
});

export const IssueParams = Type.Object({
  ...RepositoryPath,
  issue_id: Type.Integer({ ...NUMBER_RANGE, description: 'Issue number.' }),
});

/**
 * What the dump carries besides the detail (common/dumps.ts): the issues list's `has_comments`, `label` and
 * `is_assigned`, /contribute/ and the health's unassigned issues read them. `labels`: the names of its labels as
 * stored (each a label of its repository, as on GitHub); `assignees`: the logins of its assignees, published or not.
 */
export const IssueStored = Type.Object({
  comments_count: Type.Integer(),
  labels: Type.Array(Type.String()),
  assignees: Type.Array(Type.String()),
});
