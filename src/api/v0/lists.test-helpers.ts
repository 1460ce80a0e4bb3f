// What the tests of the lists share on top of test/lists.ts.
import { test } from 'node:test';
import { assertOrderings, assertUnknownOrdering, keysInOrder, keysOf, type Get } from '../../../test/lists.ts';

/**
 * The readers of a list test: `keys` gives the `key` of each item a URL lists, `ordered` the given keys
 * in the order `ordering` puts the rows in.
 */
export function listReaders<R extends Parameters<typeof keysInOrder>[0][number]>(
  get: Get,
  rows: readonly R[],
  ordering: string,
  key: keyof R & string,
) {
  return {
    keys: (url: string) => keysOf(get, url, key),
    ordered: (which: unknown[]) => keysInOrder(rows, ordering, key).filter((x) => which.includes(x)),
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
