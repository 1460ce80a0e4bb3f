// What the tests of the lists share on top of test/lists.ts.
import { keysInOrder, keysOf, type Get } from '../../../test/lists.ts';

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
