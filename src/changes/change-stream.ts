// One open stream of changes (`GET /api/v0/changes/stream`, docs/changes.md "The stream"), as the hub
// (change-hub.ts) feeds it: Server-Sent Events written to a PassThrough that the route sends as the response.
// It first reads what it missed from the database (after Last-Event-ID, `after`, or the last change at its opening),
// page by page at the reader's pace, while the hub keeps what it hands out meanwhile; then it is live and writes what
// the hub hands it. What it may queue is bounded: a live reader that does not keep up is cut off (it reconnects with
// Last-Event-ID and reads what it missed from the database), never buffered without bound.
import { PassThrough } from 'node:stream';
import { matches, type Change, type ChangeFilter } from './change-log.ts';

/** Bytes a stream may hold unsent (past what the socket took): a reader further behind is cut off. */
export const MAX_QUEUED_BYTES = 1024 * 1024;
/** Changes the hub keeps for a stream still reading its backlog; past it, the stream reads the database again. */
const MAX_PENDING = 10_000;

/** A change and its event, encoded once for every stream that sends it. */
export interface Encoded {
  change: Change;
  bytes: Buffer;
}

/** `id:` the change id, `event:` its type, `data:` the change as JSON (one line: JSON.stringify has no line breaks). */
export function encodeChange(change: Change): Encoded {
  return {
    change,
    bytes: Buffer.from(`id: ${change.id}\nevent: ${change.type}\ndata: ${JSON.stringify(change)}\n\n`),
  };
}

export type StreamEnd = 'closed' | 'cut' | 'revoked' | 'expired' | 'shutdown' | 'failed';

export interface StreamOptions {
  /** What the reader asked for; `after` is where it starts (the hub reads what follows from the database). */
  filter: ChangeFilter & { after: number };
  /** Whose stream it is (the API key's id): the per-key limit and revocations find its streams by it. */
  owner: string;
  /** When the stream must end (its key's expiry), in the app's epoch milliseconds. */
  until: number;
}

export class ChangeStream {
  readonly output = new PassThrough();
  readonly owner: string;
  until: number;
  /** The last change id sent (or where it started). */
  position: number;
  /** How it ended, once it has. */
  ended: StreamEnd | undefined;
  private readonly filter: ChangeFilter;
  /** While it reads its backlog: what the hub handed out meanwhile (undefined once live). */
  private pending: Change[] | undefined = [];
  /** The hub handed out more than MAX_PENDING meanwhile: read the database again. */
  private overflowed = false;
  /** Waiting for the reader to take what is queued (a backlog page), since this heartbeat count. */
  private waitingSince: number | undefined;
  private beats = 0;
  private readonly endListeners: ((why: StreamEnd) => void)[] = [];

  constructor({ filter, owner, until }: StreamOptions) {
    const { after, ...rest } = filter;
    this.filter = rest;
    this.position = after;
    this.owner = owner;
    this.until = until;
    // The client went away (Fastify destroys the payload when the response closes).
    this.output.once('close', () => this.finish('closed'));
    this.output.on('error', () => this.finish('closed'));
    this.output.write(': ok\n\n');
  }

  get live(): boolean {
    return this.pending === undefined && this.ended === undefined;
  }

  /** Bytes written and not yet taken by the response. */
  get queued(): number {
    return this.output.writableLength + this.output.readableLength;
  }

  onEnd(listener: (why: StreamEnd) => void): void {
    this.endListeners.push(listener);
  }

  /**
   * The changes the hub read, in id order. Live: those that pass the filter are written (a reader past
   * MAX_QUEUED_BYTES is cut off); reading the backlog: kept for when it is done.
   */
  deliver(batch: readonly Encoded[]): void {
    if (this.ended) return;
    if (this.pending) {
      if (this.overflowed) return;
      if (this.pending.length + batch.length > MAX_PENDING) {
        this.pending = [];
        this.overflowed = true;
        return;
      }
      for (const { change } of batch) this.pending.push(change);
      return;
    }
    let wrote = false;
    for (const event of batch) {
      if (event.change.id <= this.position || !matches(event.change, this.filter)) continue;
      if (!wrote) this.output.cork();
      wrote = true;
      this.output.write(event.bytes);
      this.position = event.change.id;
    }
    if (!wrote) return;
    // Uncorked on the next tick (as Node advises), so that the whole batch goes out in one write.
    process.nextTick(() => this.output.uncork());
    if (this.queued > MAX_QUEUED_BYTES) this.cut();
  }

  /**
   * Reads the backlog with `read` (the changes after an id that pass the filter, a page at a time), then goes live
   * with what the hub kept meanwhile. A failure of the database ends the stream cleanly: the client reconnects with
   * its Last-Event-ID.
   */
  async catchUp(read: (filter: ChangeFilter, limit: number) => Promise<Change[]>, page: number): Promise<void> {
    try {
      while (!this.ended) {
        this.overflowed = false;
        for (;;) {
          const changes = await read({ ...this.filter, after: this.position }, page);
          if (this.ended) return;
          for (const change of changes) this.write(encodeChange(change).bytes, change.id);
          if (changes.length < page) break;
          if (this.queued > MAX_QUEUED_BYTES / 2) await this.drained();
        }
        // No await from here on: nothing the hub hands out can come between the backlog and going live.
        if (this.ended || this.overflowed) continue;
        const kept = this.pending ?? [];
        this.pending = undefined;
        this.deliver(kept.map((change) => ({ change, bytes: encodeChange(change).bytes })));
        return;
      }
    } catch {
      this.end('failed');
    }
  }

  /** A comment every HEARTBEAT_MS; a reader that took nothing of a backlog page for two beats is cut off. */
  heartbeat(): void {
    if (this.ended) return;
    this.beats++;
    if (this.waitingSince !== undefined && this.beats - this.waitingSince >= 2) return this.cut();
    this.output.write(': keep-alive\n\n');
    if (this.queued > MAX_QUEUED_BYTES) this.cut();
  }

  /** Ends the stream after what is queued (a comment says why). */
  end(why: StreamEnd): void {
    if (this.ended) return;
    this.output.end(`: closed (${why})\n\n`);
    this.finish(why);
  }

  /** Drops the connection at once: the reader is too far behind to keep what it has not read. */
  cut(): void {
    if (this.ended) return;
    this.finish('cut');
    this.output.destroy();
  }

  private write(bytes: Buffer, id: number): void {
    this.output.write(bytes);
    this.position = id;
  }

  private drained(): Promise<void> {
    this.waitingSince = this.beats;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.output.off('drain', done);
        this.endListeners.splice(this.endListeners.indexOf(done), 1);
        this.waitingSince = undefined;
        resolve();
      };
      this.output.on('drain', done);
      this.endListeners.push(done);
    });
  }

  private finish(why: StreamEnd): void {
    if (this.ended) return;
    this.ended = why;
    this.pending = undefined;
    for (const listener of [...this.endListeners]) listener(why);
  }
}
