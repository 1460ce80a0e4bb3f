// The columns of the GitHub tables that records carry, each stated once here. Every list is checked against
// src/db/schema.ts when it compiles: a name the table lacks fails at that name, a column of the table left out fails
// at the call (its `missing` argument). The records' types (github.records.ts) are made of these lists and the
// table's types, the stored rows read back (github.stored.queries.ts) and the dataset import's issue stage
// (github-issues.stage.ts) select them: a new column is added to the migration, schema.ts, its list here and the
// mapping from GitHub's objects (github.mapping.ts), which the record's type then requires.
import type { Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';

export type GithubTable =
  'organizations' | 'members' | 'repositories' | 'milestones' | 'issues' | 'labels' | 'releases';

/**
 * Columns no record gives: the row's id, what the database computes or keeps, the references the writer resolves
 * from GitHub ids (`*_github_id` fields), and when the sync last asked for a profile.
 */
type NotFromRecords =
  | 'id'
  | 'nest_created_at'
  | 'nest_updated_at'
  | 'search_name'
  | 'search_vector'
  | 'profile_checked_at'
  | 'organization_id'
  | 'repository_id'
  | 'author_id'
  | 'milestone_id';

/** The columns of `T` a record carries. */
export type OwnColumn<T extends GithubTable> = Exclude<keyof DB[T] & string, NotFromRecords>;

/** No argument when `C` names every own column of `T`; otherwise one, naming those left out (a compile error). */
type Missing<T extends GithubTable, C extends readonly string[]> = [Exclude<OwnColumn<T>, C[number]>] extends [never]
  ? []
  : [missing: Exclude<OwnColumn<T>, C[number]>];

function recordColumns<T extends GithubTable, const C extends readonly OwnColumn<T>[]>(
  _table: T,
  columns: C,
  ..._complete: Missing<T, C>
): C {
  return columns;
}

/** A column's value in a record: as the database reads it, but a timestamp as ISO text and a GitHub id as a number. */
type RecordValue<K, V> = K extends 'github_id' ? number : V extends Date ? string : V;

/** The record of `T` with the columns `C`. */
export type RecordOf<T extends GithubTable, C extends readonly OwnColumn<T>[]> = {
  [K in C[number]]: RecordValue<K, Selectable<DB[T]>[K & keyof Selectable<DB[T]>]>;
};

export const ORGANIZATION_COLUMNS = recordColumns('organizations', [
  'github_id',
  'login',
  'name',
  'description',
  'company',
  'location',
  'email',
  'avatar_url',
  'url',
  'followers_count',
  'public_repositories_count',
  'created_at',
  'updated_at',
]);

export const MEMBER_COLUMNS = recordColumns('members', [
  'github_id',
  'login',
  'name',
  'avatar_url',
  'url',
  'bio',
  'company',
  'location',
  'title',
  'twitter_username',
  'followers_count',
  'following_count',
  'public_repositories_count',
  'created_at',
  'updated_at',
]);

export const REPOSITORY_COLUMNS = recordColumns('repositories', [
  'github_id',
  'owner_login',
  'name',
  'description',
  'homepage',
  'language',
  'default_branch',
  'url',
  'license',
  'topics',
  'is_archived',
  'is_fork',
  'commits_count',
  'contributors_count',
  'forks_count',
  'stars_count',
  'watchers_count',
  'open_issues_count',
  'size',
  'pushed_at',
  'created_at',
  'updated_at',
]);

export const MILESTONE_COLUMNS = recordColumns('milestones', [
  'github_id',
  'number',
  'title',
  'body',
  'state',
  'url',
  'open_issues_count',
  'closed_issues_count',
  'due_on',
  'closed_at',
  'created_at',
  'updated_at',
]);

export const ISSUE_COLUMNS = recordColumns('issues', [
  'github_id',
  'number',
  'title',
  'body',
  'state',
  'state_reason',
  'url',
  'comments_count',
  'is_locked',
  'closed_at',
  'created_at',
  'updated_at',
]);

export const LABEL_COLUMNS = recordColumns('labels', ['github_id', 'name', 'description', 'color', 'is_default']);

export const RELEASE_COLUMNS = recordColumns('releases', [
  'github_id',
  'tag_name',
  'name',
  'description',
  'url',
  'is_draft',
  'is_prerelease',
  'published_at',
  'created_at',
]);
