// The remembered page boundaries are bounded by entries and by keys in all: a client that pages deep into many
// differently filtered lists cannot make the cache hold every list's keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundaryCache, type Key } from './keyset.ts';

const keys = (n: number): Key[] => Array.from({ length: n }, (_, i) => [i]);

test('beyond maxKeys keys in all, the least recently used lists go first; the newest stays', async () => {
  const cache = new BoundaryCache(200, 250);
  let computed = 0;
  const get = (name: string, n: number) =>
    cache.get(name, ['issues'], () => {
      computed++;
      return Promise.resolve(keys(n));
    });
  await get('a', 100);
  await get('b', 100);
  assert.equal(cache.keyCount, 200);
  await get('a', 100); // a is now the most recently used
  await get('c', 100); // 300 > 250: b goes
  assert.equal(cache.size, 2);
  assert.equal(cache.keyCount, 200);
  assert.equal(computed, 3);
  await get('a', 100);
  await get('c', 100);
  assert.equal(computed, 3, 'a and c were kept');
  await get('b', 100);
  assert.equal(computed, 4, 'b was computed again');
  await get('huge', 1_000);
  assert.equal(cache.size, 1, 'one list over the bound is kept alone');
  assert.equal(cache.keyCount, 1_000);
});

test('a failed computation is not remembered and holds no keys; invalidation gives the keys back', async () => {
  const cache = new BoundaryCache();
  await assert.rejects(cache.get('x', ['issues'], () => Promise.reject(new Error('gone'))));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(cache.size, 0);
  assert.equal(cache.keyCount, 0);
  await cache.get('y', ['issues'], () => Promise.resolve(keys(10)));
  await cache.get('z', ['releases'], () => Promise.resolve(keys(5)));
  cache.invalidate(new Set(['issues']), new Set(['issues', 'releases']));
  assert.equal(cache.size, 1);
  assert.equal(cache.keyCount, 5);
});
