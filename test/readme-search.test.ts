// Every search example of the README (the table between the search-examples markers) finds at least one
// record in the bundled dataset, so a newcomer who copies one sees it work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildTestApp, type TestApp } from './app.ts';
import { ROOT } from './process.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp({ importBundled: true });
});
after(() => t.close());

function examples(readme: string): { list: string; q: string }[] {
  const begin = readme.indexOf('<!-- search-examples:begin -->');
  const end = readme.indexOf('<!-- search-examples:end -->');
  assert.ok(begin >= 0 && end > begin, 'README.md has the search-examples markers');
  return [...readme.slice(begin, end).matchAll(/^\| (\w+) \| `([^`]+)` \|$/gm)]
    .map((m) => ({ list: m[1]!, q: m[2]! }))
    .filter(({ list }) => list !== 'list');
}

test('each README search example returns at least one result on the bundled data', async () => {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  const found = examples(readme);
  assert.ok(found.length >= 4, `${found.length} examples`);
  const inline = /`GET (\/api\/v0\/repositories\/\?q=[^`]+)`/.exec(readme);
  assert.ok(inline, 'the inline GET example');
  for (const url of [...found.map(({ list, q }) => `/api/v0/${list}/?q=${encodeURIComponent(q)}`), inline[1]!]) {
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200, url);
    assert.ok(res.json().total_count >= 1, `${decodeURIComponent(url)} finds nothing`);
  }
});
