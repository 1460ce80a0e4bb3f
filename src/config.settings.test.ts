// One list of settings in three places: what the code reads (config.ts, and any process.env.X elsewhere in src/), the
// settings tables of docs/operating.md and .env.example. A setting added to one and forgotten in another fails here,
// by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const NAME = /^[A-Z][A-Z0-9_]+$/;

/** Names config.ts reads (`text(env, 'X')`, `integer(env, 'X', …)`, `env.X`, `env['X']`), and process.env.X in src/. */
function readByCode(): Set<string> {
  const names = new Set<string>();
  const config = read('src/config.ts');
  for (const pattern of [
    /\(\s*env,\s*'([A-Z][A-Z0-9_]+)'/g,
    /\benv\.([A-Z][A-Z0-9_]+)/g,
    /\benv\[\s*'([A-Z][A-Z0-9_]+)'\s*\]/g,
  ])
    for (const [, name] of config.matchAll(pattern)) names.add(name!);
  for (const file of readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file === 'config.ts') continue;
    for (const [, name] of read(path.join('src', file)).matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)) names.add(name!);
  }
  // What `npm start` and `cds` read before the service starts (bin/current-node.js: which Node runs it).
  for (const [, name] of read('bin/current-node.js').matchAll(/setting\('([A-Z][A-Z0-9_]+)'\)/g)) names.add(name!);
  return names;
}

/** The first cell of every row of docs/operating.md's tables that names settings: `| `PORT`, `HOST` | …`. */
function inDocs(): Set<string> {
  const names = new Set<string>();
  for (const [, cell] of read('docs/operating.md').matchAll(/^\| ((?:`[A-Z][A-Z0-9_]+`(?:, )?)+) \|/gm))
    for (const [, name] of cell!.matchAll(/`([^`]+)`/g)) if (NAME.test(name!)) names.add(name!);
  return names;
}

/** `NAME=` and `# NAME=` lines of .env.example. */
function inEnvExample(): Set<string> {
  return new Set([...read('.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map(([, name]) => name!));
}

const missing = (from: Set<string>, to: Set<string>) => [...from].filter((name) => !to.has(name)).sort();

test('every setting the code reads is in docs/operating.md and in .env.example, and neither names one it does not read', () => {
  const code = readByCode();
  const documented = inDocs();
  const example = inEnvExample();
  assert.ok(code.size > 30 && code.has('PORT') && code.has('DATABASE_URL'), [...code].join(' '));
  assert.deepEqual(missing(code, documented), [], 'read by the code, not in docs/operating.md');
  assert.deepEqual(missing(code, example), [], 'read by the code, not in .env.example');
  assert.deepEqual(missing(documented, code), [], 'in docs/operating.md, never read');
  assert.deepEqual(missing(example, code), [], 'in .env.example, never read');
});
