// What every REST resource test file shares: one app for the file, built and seeded before its tests
// and closed after them, GET and HEAD through it, and the checks of a detail route and of HEAD.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Db } from '../src/db/index.ts';
import { buildTestApp, type TestApp } from './app.ts';
import type { Get } from './lists.ts';

export interface ResourceTest {
  /** The app of this file; built by the time the tests run. */
  readonly t: TestApp;
  get: Get;
  head: Get;
}

/** Registers the `before` that builds the app and runs `seed` on its database, and the `after` that closes it. */
export function useTestApp(seed: (db: Db) => Promise<void> = async () => {}): ResourceTest {
  let current: TestApp | undefined;
  before(async () => {
    current = await buildTestApp();
    await seed(current.database.db);
  });
  after(() => current?.close());
  const app = (): TestApp => {
    assert.ok(current, 'the test app is built in before()');
    return current;
  };
  return {
    get t() {
      return app();
    },
    get: (url) => app().app.inject({ method: 'GET', url }),
    head: (url) => app().app.inject({ method: 'HEAD', url }),
  };
}

/** `base` + each of `ids` answers 200 with exactly `expected`. */
export async function assertDetail(get: Get, base: string, ids: readonly string[], expected: unknown): Promise<void> {
  for (const id of ids) {
    const res = await get(`${base}${id}`);
    assert.equal(res.statusCode, 200, id);
    assert.deepEqual(res.json(), expected, id);
  }
}

/** `base` + each of `ids` answers 404 with exactly `{ message }`. */
export async function assertNotFound(get: Get, base: string, ids: readonly string[], message: string): Promise<void> {
  for (const id of ids) {
    const res = await get(`${base}${id}`);
    assert.equal(res.statusCode, 404, id);
    assert.deepEqual(res.json(), { message }, id);
  }
}

/** HEAD on each of `urls` answers like GET does (200, JSON), without a body. */
export async function assertHead({ get, head }: Pick<ResourceTest, 'get' | 'head'>, ...urls: string[]): Promise<void> {
  for (const url of urls) {
    const [got, headed] = [await get(url), await head(url)];
    assert.equal(got.statusCode, 200, url);
    assert.equal(headed.statusCode, got.statusCode, url);
    assert.equal(headed.body, '', url);
    assert.match(String(headed.headers['content-type']), /^application\/json/, url);
  }
}
