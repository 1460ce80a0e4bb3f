// The worker thread that runs the embedded database (PGlite, PostgreSQL compiled to WASM), so that a slow
// statement runs beside the event loop instead of on it. It only executes wire-protocol bytes: the main thread
// keeps node-postgres (its parsers, its pool) and Kysely, and sends what a client would write on a socket
// (see pglite-host.ts). Requests are answered one at a time, in the order they came: PGlite has one session.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { cube } from '@electric-sql/pglite/contrib/cube';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';
import type { WorkerData, WorkerReply, WorkerRequest } from './pglite-host.ts';
import { describeError } from './disk-space.ts';
import { TRIGRAM_START_PARAMS } from './migrations/0011_fulltext_search.ts';

const port = parentPort;
if (!port) throw new Error('pglite-worker.ts runs as a worker thread (see pglite-host.ts)');
const start = workerData as WorkerData;

let pglite: PGlite;
try {
  pglite = await PGlite.create(start.dataDir, {
    extensions: { cube, pg_trgm, unaccent },
    // Compiled once by the main thread (pglite-host.ts); without it PGlite compiles its own.
    ...(start.wasm ? { pgliteWasmModule: start.wasm.pglite, initdbWasmModule: start.wasm.initdb } : {}),
    ...(start.loadDataDir ? { loadDataDir: start.loadDataDir } : {}),
    // PGlite zeroes its shared memory at every start, so each MB of buffers costs start-up time as well as memory.
    // The search's pg_trgm thresholds for the session (migration 0011), and the page cache when one is asked for.
    startParams: [
      ...PGlite.defaultStartParams,
      ...TRIGRAM_START_PARAMS,
      ...(start.sharedBuffersMb ? ['-c', `shared_buffers=${start.sharedBuffersMb}MB`] : []),
    ],
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
} catch (error) {
  port.postMessage({ ready: false, message: describeError(error) } satisfies WorkerReply);
  process.exit(1);
}

/** A new client takes over the one session: a transaction a gone client left open is rolled back first. */
async function resetSession(): Promise<void> {
  if (pglite.isInTransaction()) await pglite.exec('ROLLBACK');
}

async function handle(request: WorkerRequest): Promise<void> {
  try {
    switch (request.op) {
      case 'exec': {
        const bytes = await pglite.execProtocolRaw(request.bytes);
        // execProtocolRaw returns a copy of its output buffer: its memory can move to the main thread.
        port!.postMessage({ id: request.id, bytes } satisfies WorkerReply, [bytes.buffer as ArrayBuffer]);
        return;
      }
      case 'session':
        await resetSession();
        port!.postMessage({ id: request.id, bytes: new Uint8Array(0) } satisfies WorkerReply);
        return;
      case 'dump': {
        const tarball = new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
        port!.postMessage({ id: request.id, bytes: tarball } satisfies WorkerReply, [tarball.buffer]);
        return;
      }
      case 'close':
        if (!pglite.closed) await pglite.close();
        port!.postMessage({ id: request.id, bytes: new Uint8Array(0) } satisfies WorkerReply);
        return;
    }
  } catch (error) {
    // An exception out of PGlite itself (SQL errors come back as protocol messages, not exceptions) leaves the
    // instance in an unknown state: answer, then end this thread; the host fails every later query (503).
    port!.postMessage({ id: request.id, message: describeError(error) } satisfies WorkerReply);
    process.exit(1);
  }
}

let queue = Promise.resolve();
port.on('message', (request: WorkerRequest) => {
  queue = queue.then(() => handle(request));
});
