// What the tests of the lists share on top of test/lists.ts.
import { test } from 'node:test';
import type { Db } from '../../db/index.ts';
import { useTestApp } from '../../../test/resources.ts';
import {
  assertOrderingContract,
  assertOrderings,
  assertUnknownOrdering,
  keysInOrder,
  keysOf,
  type Get,
} from '../../../test/lists.ts';

/**
 * A test app whose database holds what `seed` inserts; `seed` adds to `rows` the records the list at `path`
 * publishes, in the order it inserted them. `keys` gives the `key` of each item a URL lists, `ordered` the given keys
 * in the order the default ordering puts the rows in, and `assertOrderingContract` checks the list's orderings (the
 * default, both `fields` each way and combined, an unknown one refused) against the rows.
 */
export function useListApp<R extends Parameters<typeof keysInOrder>[0][number]>(
  path: string,
  contract: { key: keyof R & string; byDefault: string; fields: readonly [string, string] },
  seed: (db: Db, rows: R[]) => Promise<void>,
) {
  const rows: R[] = [];
  const api = useTestApp((db) => seed(db, rows));
  const { key, byDefault } = contract;
  return {
    api,
    get: api.get,
    keys: (url: string) => keysOf(api.get, url, key),
    ordered: (which: unknown[]) => keysInOrder(rows, byDefault, key).filter((x) => which.includes(x)),
    assertOrderingContract: () => assertOrderingContract(api.get, path, rows, contract),
  };
}

/**
 * The two ordering tests of a list: `title`, every allowed ordering and the `combined` ones sort the
 * items as `rows()` (read once the app is seeded) sort; then an unknown ordering is 400 naming the allowed values.
 */
export function testOrderings<R extends Parameters<typeof assertOrderings>[2][number]>(
  title: string,
  get: Get,
  path: string,
  rows: () => readonly R[],
  allowed: readonly string[],
  combined: readonly string[],
): void {
  test(title, async () => {
    await assertOrderings(get, path, rows(), [...allowed, ...combined]);
  });
  test('an unknown ordering is 400 naming the allowed values', async () => {
    await assertUnknownOrdering(get, path, allowed);
  });
}
