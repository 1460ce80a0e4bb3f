// The one HTML escaping and the one edit distance of src/ (text.ts): what the pages and search rely on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editDistance, escapeHtml } from './text.ts';

test('escapeHtml escapes the five characters that open markup or close an attribute, and nothing else', () => {
  assert.equal(
    escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`),
    '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;',
  );
  assert.equal(escapeHtml('&amp;'), '&amp;amp;');
  assert.equal(escapeHtml('Zürich — 東京 ✓'), 'Zürich — 東京 ✓');
});

test('editDistance counts insertions, deletions, substitutions and adjacent transpositions', () => {
  const cases: [string, string, number][] = [
    ['security', 'security', 0],
    ['securty', 'security', 1], // a letter left out
    ['securitty', 'security', 1], // one too many
    ['secarity', 'security', 1], // one changed
    ['secuirty', 'security', 1], // two swapped
    ['scuirty', 'security', 2],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
    ['ca', 'abc', 3], // optimal string alignment: a swapped pair is not edited again
  ];
  for (const [a, b, distance] of cases) {
    assert.equal(editDistance(a, b, 3), distance, `${a} → ${b}`);
    assert.equal(editDistance(b, a, 3), distance, `${b} → ${a}`);
  }
});

test('editDistance gives up past its maximum: any greater distance is max + 1', () => {
  assert.equal(editDistance('kitten', 'sitting', 2), 3);
  assert.equal(editDistance('kitten', 'sitting', 1), 2);
  assert.equal(editDistance('owasp', 'zap', 1), 2); // lengths two apart: not compared
  assert.equal(editDistance('abcdefgh', 'hgfedcba', 2), 3);
  assert.equal(editDistance('abcdefgh', 'abcdefgx', 0), 1);
  assert.equal(editDistance('abcdefgh', 'abcdefgh', 0), 0);
});
