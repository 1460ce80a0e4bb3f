// `npm start`: the service from the sources (src/server.ts, through tsx's loader), on a current Node when the running
// one is too old for the embedded database (bin/current-node.js; docs/decisions.md, "pglite-trap").
import path from 'node:path';
import { currentNode, runOn } from './current-node.js';

const root = path.join(import.meta.dirname, '..');
const binary = currentNode(root);
if (binary) runOn(binary, [...process.execArgv, path.join(root, 'src/server.ts')]);
else await import('../src/server.ts');
