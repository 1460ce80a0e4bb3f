// What the tests of the repository-scoped lists that track their records (issues, milestones) share.
import { test } from 'node:test';
import type { Db } from '../../db/index.ts';
import { insertTracked, nestRepositories, type Tracked, type TrackedSpec } from '../../../test/factories-github.ts';
import { useListApp } from './lists.test-helpers.ts';

type Repositories = Awaited<ReturnType<typeof nestRepositories>>;
type Insert = Parameters<typeof insertTracked>[1];

/** The default ordering of these lists. */
const DEFAULT = '-created_at,-updated_at';

/**
 * The records both lists are tested on: repository, number, title, state, and created_at and updated_at in days.
 * Equal dates on purpose, so the id tie-breaker decides; `Nest` is a repository of two organizations.
 */
const specs = ({ nest, other, octoNest }: Repositories): readonly TrackedSpec[] => [
  [nest, 1, 'a', 'open', 3, 5],
  [nest, 2, 'b', 'closed', 1, 5],
  [other, 1, 'c', 'open', 3, 6],
  [octoNest, 1, 'd', 'closed', 2, 5],
  [nest, 3, 'e', 'open', 1, 7],
  [other, 2, 'f', 'open', 3, 6],
  [octoNest, 2, 'g', 'open', 2, 4],
];

/**
 * A test app whose database holds nestRepositories, one record per spec above (`insert` adds what its table
 * needs), then what `more` inserts; the list's rows are them all, in that order. `titles` reads the titles a
 * URL lists, `ordered` puts the given titles in the default order; the ordering contract of `list` is
 * tested here.
 */
export function useTrackedApp(
  list: string,
  insert: (db: Db) => Insert,
  more: (db: Db, repositories: Repositories) => Promise<Tracked[]> = () => Promise.resolve([]),
) {
  const tracked = useListApp<Tracked>(
    list,
    { key: 'title', byDefault: DEFAULT, fields: ['created_at', 'updated_at'] },
    async (db, rows) => {
      const repositories = await nestRepositories(db);
      rows.push(...(await insertTracked(specs(repositories), insert(db))));
      rows.push(...(await more(db, repositories)));
    },
  );
  test('orderings: default -created_at,-updated_at, each value both ways, unknown → 400', async () => {
    await tracked.assertOrderingContract();
  });
  return { api: tracked.api, titles: tracked.keys, ordered: tracked.ordered };
}
