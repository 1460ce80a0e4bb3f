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
import { TRIGRAM_START_PARAMS } from '../migrations/0011_fulltext_search.ts';

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
  stopOnStepFailure(pglite);
  port.postMessage({ ready: true } satisfies WorkerReply);
} catch (error) {
  port.postMessage({ ready: false, message: describeError(error) } satisfies WorkerReply);
  process.exit(1);
}

/** The request being answered, whose answer a failed step of the backend becomes (stopOnStepFailure). */
let answering: number | undefined;

/**
 * PGlite runs a query by calling the backend's step (`_PostgresMainLoopOnce`) until its input is consumed, and swallows
 * every exception of a step but its own long jump: after a WebAssembly trap or a stack overflow in the middle of a
 * query, the step fails again on the same input forever, at 100 % of a core, and no query is answered again (PGlite
 * issue #1058). Seen in our test runs on Node 20, whose V8 now and then traps in pg_trgm ("null function or function
 * signature mismatch", never on Node 22 or 24: docs/decisions.md, "pglite-trap"), and with a recursion deep enough to
 * overflow this thread's stack (test/pglite-worker.test.ts). Such an
 * exception ends this thread instead, as any exception out of PGlite does (handle() below): the pending query and every
 * later one fail at once (503), and the supervisor restarts the database on a data folder (pglite-supervisor.ts).
 */
function stopOnStepFailure(instance: PGlite): void {
  const internals = instance as unknown as {
    mod?: { _PostgresMainLoopOnce: () => void };
    POSTGRES_MAIN_LONGJMP?: number;
  };
  const mod = internals.mod;
  if (!mod) return;
  const longJump = internals.POSTGRES_MAIN_LONGJMP ?? 100;
  const step = mod._PostgresMainLoopOnce.bind(mod);
  mod._PostgresMainLoopOnce = () => {
    try {
      step();
    } catch (error) {
      // PGlite's long jump (an ERROR: the backend recovers and answers it) is PGlite's to handle.
      if ((error as { status?: unknown } | null)?.status === longJump) throw error;
      const message = `the embedded database failed in a query: ${describeError(error) || 'an exception without a message'}`;
      if (answering !== undefined) port!.postMessage({ id: answering, message } satisfies WorkerReply);
      process.exit(1);
    }
  };
}

/** A new client takes over the one session: a transaction a gone client left open is rolled back first. */
async function resetSession(): Promise<void> {
  if (pglite.isInTransaction()) await pglite.exec('ROLLBACK');
}

async function handle(request: WorkerRequest): Promise<void> {
  answering = request.id;
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
