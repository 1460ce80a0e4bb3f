// The fan-out of the stream (docs/changes.md, "The stream"): ONE poller per instance reads the changes committed
// after the last it read and hands them to every open stream (change-stream.ts), which filters them. Instances share
// changes through the database: each polls it, every POLL_MS and at once when the data version moves (the app wires
// DataVersionWatcher.onChange to wake(); with Redis another instance's write is heard before a second has passed).
// The ids' order is the commit order (migration 0014), so reading `id > last` misses nothing.
//
// A stream reads its own backlog; the hub keeps for it what it hands out meanwhile. That leaves no gap: every change
// with an id up to the hub's `last` when the stream registered was committed by then (so its backlog read sees it),
// and every later one goes through the hub afterwards.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import { lastChangeId, readChanges } from './change-log.queries.ts';
import { ChangeStream, encodeChange, type StreamEnd, type StreamOptions } from './change-stream.ts';

/** How often the database is polled for new changes (a moved data version polls at once). */
export const POLL_MS = 250;
/** A comment this often keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;
/** Changes read per query, by the hub and by a stream reading its backlog. */
const PAGE = 1_000;

/** Runs `task` every `intervalMs` until the returned function stops it (auth/session-sweep.ts' Every). */
export type Every = (intervalMs: number, task: () => Promise<void>) => () => void;

const everyInterval: Every = (intervalMs, task) => {
  const timer = setInterval(() => void task(), intervalMs).unref();
  return () => clearInterval(timer);
};

export interface HubOptions {
  /** The timer of the poll and the heartbeat (tests run the heartbeat by hand). */
  every?: Every;
  /** The app's time in epoch milliseconds: streams end at their `until`. */
  clock?: () => number;
}

export class ChangeHub {
  /** The last change id handed out (undefined until the database first answered). */
  private last: number | undefined;
  private readonly streams = new Set<ChangeStream>();
  /** Streams registered since start: a poll that began before one registered must not move `last` past it. */
  private registered = 0;
  private polling: Promise<void> | undefined;
  private again = false;
  private stops: (() => void)[] = [];
  private readonly tickListeners: (() => void)[] = [];
  private failing = false;
  /** Streams cut off for reading too slowly, since start (metrics). */
  cut = 0;
  private readonly every: Every;
  private readonly clock: () => number;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    { every = everyInterval, clock = Date.now }: HubOptions = {},
  ) {
    this.every = every;
    this.clock = clock;
  }

  /** Streams open now. */
  get size(): number {
    return this.streams.size;
  }

  start(): void {
    void this.wake();
    this.stops.push(
      // With no stream open, only where the log ends is kept, and a data version that moves wakes the hub anyway: the
      // timer then reads nothing (four database reads a second of an idle instance). A `last` left behind costs the
      // first stream's poll a re-read, whose changes the stream drops (it has them, or they precede its position).
      this.every(POLL_MS, () => (this.streams.size === 0 && this.last !== undefined ? Promise.resolve() : this.wake())),
      this.every(HEARTBEAT_MS, () => {
        for (const stream of this.streams) stream.heartbeat();
        return Promise.resolve();
      }),
    );
  }

  /** Ends every stream (a server that stops) and the poll. */
  async stop(): Promise<void> {
    for (const stop of this.stops) stop();
    this.stops = [];
    for (const stream of [...this.streams]) stream.end('shutdown');
    await this.polling;
  }

  /** Called at every poll (the expiry and revocation checks of the streams' keys, access/stream-keys.ts). */
  onTick(listener: () => void): void {
    this.tickListeners.push(listener);
  }

  /** Polls now (or once more after the poll under way). */
  wake(): Promise<void> {
    if (this.polling) {
      this.again = true;
      return this.polling;
    }
    this.polling = (async () => {
      do {
        this.again = false;
        await this.poll();
      } while (this.again);
    })().finally(() => (this.polling = undefined));
    return this.polling;
  }

  /**
   * Opens a stream: from `filter.after` it reads its backlog, then it is live. Resolves once registered (the
   * backlog is read in the background).
   */
  open(options: StreamOptions): ChangeStream {
    const stream = new ChangeStream(options);
    this.streams.add(stream);
    this.registered++;
    stream.onEnd((why: StreamEnd) => {
      this.streams.delete(stream);
      if (why === 'cut') this.cut++;
    });
    void stream.catchUp((filter, limit) => readChanges(this.db, filter, limit), PAGE);
    return stream;
  }

  /** The open streams of an owner (a key's id). */
  streamsOf(owner: string): ChangeStream[] {
    return [...this.streams].filter((stream) => stream.owner === owner);
  }

  /** The owners with open streams. */
  owners(): Set<string> {
    return new Set([...this.streams].map((stream) => stream.owner));
  }

  private async poll(): Promise<void> {
    const now = this.clock();
    for (const stream of [...this.streams]) if (stream.until <= now) stream.end('expired');
    for (const listener of this.tickListeners) listener();
    try {
      // Not yet read where the log ends: from the earliest stream's position (they drop what they have sent).
      if (this.last === undefined && this.streams.size > 0)
        this.last = Math.min(...[...this.streams].map((stream) => stream.position));
      if (this.last === undefined || this.streams.size === 0) {
        // Nobody to hand changes to: only where the log ends, unless a stream registered meanwhile.
        const registered = this.registered;
        const last = await lastChangeId(this.db);
        if (this.registered === registered) this.last = last;
      } else {
        for (;;) {
          const changes = await readChanges(this.db, { after: this.last }, PAGE);
          if (changes.length === 0) break;
          const batch = changes.map(encodeChange);
          for (const stream of [...this.streams]) stream.deliver(batch);
          this.last = changes.at(-1)!.id;
          if (changes.length < PAGE) break;
        }
      }
      if (this.failing) this.log.info('change log readable again: streams resume');
      this.failing = false;
    } catch (error) {
      // The database is away: streams stay open (heartbeats) and resume from `last` when it is back.
      if (!this.failing) this.log.warn({ err: error }, 'change log not readable: streams wait');
      this.failing = true;
    }
  }
}
