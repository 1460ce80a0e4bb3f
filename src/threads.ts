// Worker threads started from a file beside the caller's. Under tsx (`node --import tsx`, the test runner, `cds` from
// the sources) that file is a .ts; once built (dist/) it is a .js. A worker thread does not get the loader of
// `--import tsx` (Node 20 loads a worker's entry before its own --import), so a .ts worker starts from a line of
// JavaScript that registers tsx's loader and then imports the entry.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The entry `name` (without extension) beside the module of `url`, with that module's own extension. */
export function workerEntry(url: string, name: string): URL {
  return new URL(`./${name}${path.extname(fileURLToPath(url))}`, url);
}

export function startWorker(entry: URL, options: WorkerOptions = {}): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
