#!/usr/bin/env node
// The `cds` command: runs the compiled CLI in dist/ when `npm run build` has made it and it is not
// older than the sources, otherwise the TypeScript sources through tsx's loader (no build needed). On a Node too old
// for the embedded database it runs itself again on a current one (bin/current-node.js).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { currentNode, runOn } from './current-node.js';

const root = path.join(import.meta.dirname, '..');
const built = path.join(root, 'dist/cli/main.js');
const sources = path.join(root, 'src');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts'))
      newest = Math.max(newest, statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

const binary = currentNode(root);
if (binary) {
  runOn(binary, [...process.execArgv, ...process.argv.slice(1)]);
} else if (existsSync(built) && (!existsSync(sources) || statSync(built).mtimeMs >= newestSource(sources))) {
  await import(built);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
