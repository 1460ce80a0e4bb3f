import { Type } from '@sinclair/typebox';
import { DateTime, StringFilter } from '../common/schemas.ts';
import { MAX_QUERY_LENGTH } from '../../../list-filter/filter.fields.ts';
import { searchDescription } from '../../../list-filter/filter.docs.ts';

export const RepositoryItem = Type.Object(
  {
    name: Type.String({ description: 'Repository name, unique within its organization.' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'RepositoryListItem' },
);

export const RepositoryDetail = Type.Object(
  {
    name: Type.String({ description: 'Repository name, unique within its organization.' }),
    description: Type.String(),
    commits_count: Type.Integer(),
    contributors_count: Type.Integer(),
    forks_count: Type.Integer(),
    stars_count: Type.Integer(),
    open_issues_count: Type.Integer(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'Repository' },
);

export const RepositoryFilters = Type.Object({
  organization_id: StringFilter('Organization login (the owner in the URL), case-insensitive exact match.'),
  q: Type.Optional(Type.String({ maxLength: MAX_QUERY_LENGTH, description: searchDescription('repositories') })),
});

/** The two path segments that name a repository; issues, milestones and releases nest under them. */
export const RepositoryPath = {
  organization_id: Type.String({ maxLength: 200, description: 'Organization login, case-insensitive.' }),
  repository_id: Type.String({ maxLength: 200, description: 'Repository name, case-insensitive.' }),
};

export const RepositoryParams = Type.Object(RepositoryPath);

/** The list filters of issues, milestones and releases that select repositories. */
export const RepositoryScopeFilters = {
  organization: StringFilter('Organization login (the repository owner), case-insensitive exact match.'),
  repository: StringFilter('Repository name, case-insensitive exact match.'),
};

/** The repository a detail path names (`/…/:organization_id/:repository_id/…`), as the queries take it. */
export function repositoryOf(params: { organization_id: string; repository_id: string }) {
  return { organization: params.organization_id, repository: params.repository_id };
}

/**
 * What the dump carries besides the detail (common/dumps.ts): `q`'s `language:` and `archived:`, the `language`
 * group_by, and a project's `stars:` (its repositories but forks) read them.
 */
export const RepositoryStored = Type.Object({
  language: Type.String(),
  is_archived: Type.Boolean(),
  is_fork: Type.Boolean(),
});
