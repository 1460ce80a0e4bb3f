// What the tests of the repository-scoped lists that track their records (issues, milestones) share.
import { test } from 'node:test';
import type { Db } from '../../db/index.ts';
import { insertTracked, nestRepositories, type Tracked, type TrackedSpec } from '../../../test/factories-github.ts';
import { assertOrderingContract } from '../../../test/lists.ts';
import { useTestApp } from '../../../test/resources.ts';
import { listReaders } from './lists.test-helpers.ts';

type Repositories = Awaited<ReturnType<typeof nestRepositories>>;
type Insert = Parameters<typeof insertTracked>[1];

/** The default ordering of these lists. */
const DEFAULT = '-created_at,-updated_at';

/**
 * A test app whose database holds nestRepositories, one record per spec (`insert` adds what its table
 * needs), then what `more` inserts; `rows` tracks them all, in that order. `titles` reads the titles a
 * URL lists, `ordered` puts the given titles in the default order; the ordering contract of `list` is
 * tested here.
 */
export function useTrackedApp(
  list: string,
  specs: (repositories: Repositories) => readonly TrackedSpec[],
  insert: (db: Db) => Insert,
  more: (db: Db, repositories: Repositories) => Promise<Tracked[]> = async () => [],
) {
  const rows: Tracked[] = [];
  const api = useTestApp(async (db) => {
    const repositories = await nestRepositories(db);
    rows.push(...(await insertTracked(specs(repositories), insert(db))));
    rows.push(...(await more(db, repositories)));
  });
  test('orderings: default -created_at,-updated_at, each value both ways, unknown → 400', async () => {
    await assertOrderingContract(api.get, list, rows, {
      key: 'title',
      fields: ['created_at', 'updated_at'],
      byDefault: DEFAULT,
    });
  });
  const { keys: titles, ordered } = listReaders(api.get, rows, DEFAULT, 'title');
  return { api, rows, titles, ordered };
}
