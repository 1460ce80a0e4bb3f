// The main thread's side of the embedded database: PGlite runs in a worker thread (pglite-worker.ts) and
// node-postgres talks to it as to a server, through a socket-like stream (PgliteSocket) whose bytes go to the
// worker and back. Parsing, type parsers, the pool and Kysely stay exactly those of a PostgreSQL server.
//
// A worker that dies (an exception out of PGlite, an out-of-memory abort, terminate()) fails every pending and
// later query with an ECONNRESET error, which the error mapping answers with 503; the process keeps running,
// and cached responses and the probes keep answering. Its open sockets are destroyed, so node-postgres discards
// the clients bound to them. A PgliteWorker is not restarted in place: pglite-supervisor.ts starts a new one on
// the same data folder (PostgreSQL's crash recovery replays the WAL).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Duplex } from 'node:stream';
import type { Worker, WorkerOptions } from 'node:worker_threads';
import { startWorker, workerEntry } from '../../threads.ts';

/** What the worker starts from (its workerData). */
export interface WorkerStart {
  /** A folder, or `memory://`. */
  dataDir: string;
  /**
   * A tarball of dumpDataDir() to start from (the tests' templates). A Blob reaches the worker without a copy: its
   * bytes are shared between threads.
   */
  loadDataDir?: Blob;
  /** PostgreSQL's shared_buffers in MB (PGLITE_SHARED_BUFFERS_MB); unset: PostgreSQL's default, 128 MB. */
  sharedBuffersMb?: number | undefined;
}

/** What PgliteWorker.start adds to WorkerStart: PGlite's WebAssembly, compiled once per process (see compiledWasm). */
export interface WorkerData extends WorkerStart {
  wasm?: CompiledWasm | undefined;
}

// Node's global WebAssembly, which the ES libraries this project is checked against do not declare.
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };
/** A compiled WebAssembly.Module (PGlite's options take it as such). */
type WasmModule = object;

interface CompiledWasm {
  pglite: WasmModule;
  initdb: WasmModule;
}

// A WebAssembly module passed to a worker thread is shared with it, machine code included, and PGlite takes one
// (its pgliteWasmModule and initdbWasmModule options): compiled here once, each new worker (every database opened,
// a restart after a crash) instantiates it instead of compiling its own ~9 MB of WebAssembly (~0.4 s of CPU each).
// If it cannot be compiled here, each worker loads PGlite's files itself, as PGlite does by default.
// Kept on globalThis, not in this module: under `npm test` each test file's bundle has its own copy of this file,
// and one compile serves them all (test/runner/README.md, "Why src/ keeps three things on globalThis").
const COMPILED = Symbol.for('cds.pglite-wasm');
function compiledWasm(): Promise<CompiledWasm | undefined> {
  const shared = globalThis as { [COMPILED]?: Promise<CompiledWasm | undefined> };
  shared[COMPILED] ??= (async () => {
    const dist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const compile = async (file: string) => WebAssembly.compile(await readFile(path.join(dist, file)));
    const [pglite, initdb] = await Promise.all([compile('pglite.wasm'), compile('initdb.wasm')]);
    return { pglite, initdb };
  })().catch(() => undefined);
  return shared[COMPILED];
}

export type WorkerRequest =
  { id: number; op: 'exec'; bytes: Uint8Array } | { id: number; op: 'session' | 'dump' | 'close' };

type Unsent = { op: 'exec'; bytes: Uint8Array } | { op: 'session' | 'dump' | 'close' };

export type WorkerReply =
  | { ready: true }
  | { ready: false; message: string }
  | { id: number; bytes: Uint8Array }
  | { id: number; message: string };

interface Pending {
  resolve(bytes: Uint8Array): void;
  reject(error: Error): void;
}

// The worker's file is the one beside this one (src/threads.ts: a .ts under tsx, a .js once built).
const WORKER_ENTRY = workerEntry(import.meta.url, 'pglite-worker');
const newWorker = (options: WorkerOptions): Worker => startWorker(WORKER_ENTRY, options);

/** The error of every query once the worker is gone: ECONNRESET, like a server that dropped its connection. */
export class PgliteWorkerGoneError extends Error {
  readonly code = 'ECONNRESET';
  constructor(reason: string) {
    super(`the embedded database stopped: ${reason}`);
    this.name = 'PgliteWorkerGoneError';
  }
}

export class PgliteWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  readonly #sockets = new Set<PgliteSocket>();
  #gone: PgliteWorkerGoneError | undefined;
  #closing = false;
  #onExit: (reason: string) => void = () => {};
  /** Settles once the worker thread has ended, with why (`closed` after close()). */
  readonly exited: Promise<string>;

  private constructor(worker: Worker) {
    this.#worker = worker;
    this.exited = new Promise((resolve) => (this.#onExit = resolve));
  }

  /** Starts the worker and opens the database in it; rejects with PGlite's own message when it cannot. */
  static async start(start: WorkerStart): Promise<PgliteWorker> {
    const worker = newWorker({
      workerData: { ...start, wasm: await compiledWasm() } satisfies WorkerData,
    });
    const host = new PgliteWorker(worker);
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => reject(error);
      const exited = (code: number) =>
        reject(new Error(`the embedded database worker exited (code ${code}) while opening`));
      worker.once('error', failed);
      worker.once('exit', exited);
      worker.once('message', (reply: WorkerReply) => {
        worker.off('error', failed);
        worker.off('exit', exited);
        if ('ready' in reply && reply.ready) resolve();
        else reject(new Error('message' in reply ? reply.message : 'the embedded database did not open'));
      });
    });
    worker.on('message', (reply: WorkerReply) => host.#reply(reply));
    worker.on('error', (error) => host.#fail(error.message));
    worker.on('exit', (code) => {
      const reason = host.#closing ? 'closed' : `its worker exited with code ${code}`;
      host.#fail(reason);
      host.#onExit(reason);
    });
    // Held only while a request is pending: an idle database does not keep the process alive, a query does.
    worker.unref();
    return host;
  }

  /** Runs protocol bytes (one or more whole messages) and returns what the backend wrote back. */
  exec(bytes: Uint8Array): Promise<Uint8Array> {
    return this.#request({ op: 'exec', bytes }, [bytes.buffer as ArrayBuffer]);
  }

  /** A new client takes over the one session (a transaction a gone client left open is rolled back). */
  async newSession(): Promise<void> {
    await this.#request({ op: 'session' });
  }

  /** A tarball of the data folder (PGlite's dumpDataDir), after every request sent before it. */
  async dumpDataDir(): Promise<Blob> {
    return new Blob([await this.#request({ op: 'dump' })]);
  }

  /** Whether the worker is gone (crashed or closed): every request then fails. */
  get stopped(): boolean {
    return this.#gone !== undefined;
  }

  /** Closes the database (after the requests already sent) and ends the worker. */
  async close(): Promise<void> {
    if (this.#gone) return;
    try {
      await this.#request({ op: 'close' });
    } finally {
      this.#closing = true;
      await this.#worker.terminate();
      this.#fail('closed');
    }
  }

  /** Ends the worker at once, as a crash would (fault tests): pending and later queries fail, close() still works. */
  async crash(): Promise<void> {
    await this.#worker.terminate();
  }

  /** The stream node-postgres uses instead of a TCP socket (its `stream` option). */
  socket(): Duplex {
    const socket = new PgliteSocket(this);
    if (this.#gone) return socket; // its connect() fails at once
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    return socket;
  }

  #request(request: Unsent, transfer: ArrayBuffer[] = []): Promise<Uint8Array> {
    if (this.#gone) return Promise.reject(this.#gone);
    const id = this.#nextId++;
    if (this.#pending.size === 0) this.#worker.ref();
    return new Promise<Uint8Array>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...request, id } as WorkerRequest, transfer);
    });
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (this.#pending.size === 0 && !this.#gone) this.#worker.unref();
    return pending;
  }

  #reply(reply: WorkerReply): void {
    if (!('id' in reply)) return;
    const pending = this.#settle(reply.id);
    if ('bytes' in reply) pending?.resolve(reply.bytes);
    else pending?.reject(new PgliteWorkerGoneError(reply.message));
  }

  #fail(reason: string): void {
    this.#gone ??= new PgliteWorkerGoneError(reason);
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.reject(this.#gone);
    }
    // An idle client's socket learns it too: node-postgres then drops that client from its pool, so the next
    // query gets a new connection (to a restarted worker) instead of failing on a dead one.
    for (const socket of this.#sockets) socket.destroy(this.#gone);
    this.#sockets.clear();
  }
}

/**
 * What node-postgres's Connection needs of a socket: connect() emits 'connect', written messages go to the
 * worker (all those written in one tick as one request, as a socket would carry them), the answer comes back
 * as 'data'. PGlite's one session outlives its clients: the startup packet is answered here (AuthenticationOk,
 * ReadyForQuery) after the worker resets the session, and a Terminate is not sent on.
 */
class PgliteSocket extends Duplex {
  readonly #host: PgliteWorker;
  #written: Buffer[] = [];
  #flushing = false;

  constructor(host: PgliteWorker) {
    super();
    this.#host = host;
  }

  connect(): this {
    process.nextTick(() => {
      if (this.#host.stopped) this.destroy(new PgliteWorkerGoneError('it is not running'));
      else this.emit('connect');
    });
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  // The pool refs and unrefs its clients' sockets; the worker itself is held while a request is pending.
  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#written.push(chunk);
    if (!this.#flushing) {
      this.#flushing = true;
      queueMicrotask(() => this.#flush());
    }
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    // The client ended its side (after a Terminate): the server's side ends too, so the stream closes.
    this.push(null);
    done();
  }

  #flush(): void {
    this.#flushing = false;
    const { startup, messages: bytes, rest } = frames(Buffer.concat(this.#written));
    // node-postgres writes whole messages; a part of one would wait for the rest.
    this.#written = rest.length > 0 ? [rest] : [];
    if (this.destroyed) return;
    if (startup) {
      this.#host.newSession().then(
        () => this.destroyed || this.push(STARTED),
        (error: Error) => this.destroy(error),
      );
    }
    if (bytes.length === 0) return;
    this.#host.exec(bytes).then(
      (answer) => {
        if (!this.destroyed && answer.length > 0)
          this.push(Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength));
      },
      (error: Error) => this.destroy(error),
    );
  }
}

// AuthenticationOk ('R', length 8, 0) then ReadyForQuery ('Z', length 5, idle).
const STARTED = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]);

/**
 * Whether `bytes` hold a startup packet; their other whole messages but a Terminate ('X'), in a fresh buffer (it
 * moves to the worker); and what is left after the last whole message.
 */
function frames(bytes: Buffer): { startup: boolean; messages: Uint8Array; rest: Buffer } {
  const kept: Buffer[] = [];
  let startup = false;
  let at = 0;
  while (at + 5 <= bytes.length) {
    // A startup packet has no type byte (its length's high byte is 0); every other message is a type and a length.
    const isStartup = bytes[at] === 0;
    const length = isStartup ? bytes.readInt32BE(at) : 1 + bytes.readInt32BE(at + 1);
    if (length < 4 || at + length > bytes.length) break;
    if (isStartup) startup = true;
    else if (bytes[at] !== 0x58) kept.push(bytes.subarray(at, at + length));
    at += length;
  }
  return { startup, messages: new Uint8Array(Buffer.concat(kept)), rest: Buffer.from(bytes.subarray(at)) };
}
