// Every search example of the README finds records in the bundled dataset (the structured `q` table), or its record
// first (the ranked search's table), so a newcomer who copies one sees it work.
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

test('each README ranked-search example finds its record first on the bundled data', async () => {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  const begin = readme.indexOf('<!-- ranked-search-examples:begin -->');
  const end = readme.indexOf('<!-- ranked-search-examples:end -->');
  assert.ok(begin >= 0 && end > begin, 'README.md has the ranked-search-examples markers');
  const found = [...readme.slice(begin, end).matchAll(/^\| `([^`]+)` \| `([^`]+)` \|$/gm)].map((m) => ({
    q: m[1]!,
    expected: m[2]!,
  }));
  assert.ok(found.length >= 4, `${found.length} examples`);
  for (const { q, expected } of found) {
    const res = await t.app.inject({ method: 'GET', url: `/api/v0/search/?q=${encodeURIComponent(q)}` });
    assert.equal(res.statusCode, 200, q);
    const [first] = res.json().items as { resource: string; id: string }[];
    assert.equal(`${first?.resource}/${first?.id}`, expected, q);
  }
});

test('each README example of near, group_by and fields answers 200 and begins as shown on the bundled data', async () => {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  const begin = readme.indexOf('<!-- agents-examples:begin -->');
  const end = readme.indexOf('<!-- agents-examples:end -->');
  assert.ok(begin >= 0 && end > begin, 'README.md has the agents-examples markers');
  const lines = readme.slice(begin, end).split('\n');
  let checked = 0;
  for (const [i, line] of lines.entries()) {
    const url = /^curl .*'http:\/\/127\.0\.0\.1:8000(\/api\/v0\/[^']+)'$/.exec(line)?.[1];
    if (!url) continue;
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200, url);
    checked++;
    // The answer shown below the command, up to its first ellipsis, is how the answer begins.
    const shown = /^# (\{.*)$/.exec(lines[i + 1] ?? '')?.[1];
    if (shown) assert.ok(res.body.startsWith(shown.split('…')[0]!), `${url}: ${res.body.slice(0, 200)}`);
  }
  assert.ok(checked >= 3, `${checked} examples`);
});
