// Where the rate limit counts: in Redis, shared by every instance, or in this process. Counting falls back to the
// process while Redis cannot be used (the connection is down, or Redis refuses the counts: READONLY from a primary
// that a failover demoted, CROSSSLOT or MOVED from a topology the client was not told of, a timeout) and returns to
// Redis once a count goes through again. Each change is logged once, when it happens: a silent fallback once hid a
// limit counted twice over behind `cds_rate_limit_shared 1` (issue 29), and a line per request would flood the log.
import type { FastifyBaseLogger } from 'fastify';
import { isReady, type RedisClient } from '../redis.ts';

/** The log messages of the two changes (tests look for them). */
export const FALLBACK_STARTED = 'Redis cannot be used: rate limits are counted per instance';
export const FALLBACK_ENDED = 'Redis can be used again: rate limits are shared';

/** How often counting is tried again while a connected Redis refuses it (a lost connection reconnects on its own). */
export const PROBE_MS = 250;

export class SharedCounting {
  /** Why a connected Redis refuses counts; undefined while they go through. */
  private refusal: string | undefined;
  /** The refusal is Redis's own answer (READONLY, CROSSSLOT, MOVED), which a reconnection to the same server would meet again. */
  private answered = false;
  /** The connection's last error: the reason logged when a lost connection starts the fallback. */
  private lastError: string | undefined;
  /** The state last logged (true: shared); undefined before the first, so that a start in Redis logs nothing. */
  private logged: boolean | undefined;
  private fallbackSince = 0;
  private probing: NodeJS.Timeout | undefined;
  private closed = false;
  /**
   * Moves at each change of state. A count remembers it when it starts: one that fails after a change (sent before a
   * reconnection, answered after it) tells nothing about the new state and is ignored.
   */
  generation = 0;

  constructor(
    private readonly redis: RedisClient | undefined,
    private readonly log: FastifyBaseLogger | undefined,
    /** A count as the limiter makes them, on a key of its own: what must go through for counting to return. */
    private readonly probe: () => Promise<unknown>,
  ) {
    // Redis's own refusal outlives a reconnection (a server that answered READONLY may still be a replica): the probe
    // ends it. Any other (a command lost with its connection) ends with the new connection.
    redis?.on('ready', () => {
      this.lastError = undefined;
      if (!this.answered) this.refusal = undefined;
      this.settle();
    });
    redis?.on('error', (error: Error) => {
      this.lastError = withCause(error);
      this.settle();
    });
    redis?.on('close', () => this.settle());
    // The connection may be ready already (it is opened before the app's other parts).
    this.settle();
  }

  /** True while counts go to Redis. */
  get shared(): boolean {
    return isReady(this.redis) && this.refusal === undefined;
  }

  /** A count of `generation` failed: unless the state changed since it started, counting falls back. */
  failed(error: unknown, generation: number): void {
    if (generation !== this.generation || this.closed) return;
    // Redis's own answer is a refusal even when the connection is no longer ready (READONLY also reconnects).
    const answered = error instanceof Error && error.name === 'ReplyError';
    if (isReady(this.redis) || answered) this.refuse(error, answered);
    this.settle();
  }

  /** No more logs nor probes: the app is closing (its own disconnect is no fallback). */
  close(): void {
    this.closed = true;
    this.stopProbing();
  }

  private refuse(error: unknown, answered: boolean): void {
    this.refusal = error instanceof Error ? error.message : String(error);
    this.answered = answered;
  }

  private settle(): void {
    if (this.closed) return;
    const shared = this.shared;
    if (this.refusal !== undefined && isReady(this.redis)) this.startProbing();
    else this.stopProbing();
    // Before the first count in Redis, only an error of the connection is news: a start that takes a reconnection (a
    // cluster's ready check that timed out while the process was busy starting) is not yet a fallback.
    const starting = this.logged === undefined && (shared || this.lastError === undefined);
    if (shared === this.logged || starting) {
      if (shared || !starting) this.logged = shared;
      return;
    }
    this.logged = shared;
    this.generation++;
    if (shared) {
      this.log?.info({ perInstanceMs: Date.now() - this.fallbackSince }, FALLBACK_ENDED);
    } else {
      this.fallbackSince = Date.now();
      const reason = this.refusal ?? this.lastError ?? `connection ${this.redis?.status ?? 'absent'}`;
      this.log?.warn({ reason }, FALLBACK_STARTED);
    }
  }

  private startProbing(): void {
    if (this.probing) return;
    let trying = false;
    this.probing = setInterval(() => {
      if (trying || !isReady(this.redis)) return;
      trying = true;
      this.probe()
        .then(
          () => {
            this.refusal = undefined;
            this.settle();
          },
          (error: unknown) => {
            if (this.refusal !== undefined) this.refuse(error, error instanceof Error && error.name === 'ReplyError');
          },
        )
        .finally(() => (trying = false));
    }, PROBE_MS).unref();
  }

  private stopProbing(): void {
    clearInterval(this.probing);
    this.probing = undefined;
  }
}

/**
 * An error's message with the cause a cluster client hides: ioredis' "Failed to refresh slots cache." says that no node
 * gave the slots, its `lastNodeError` why the last one did not (a timeout, a refused connection).
 */
function withCause(error: Error): string {
  const cause = (error as Error & { lastNodeError?: unknown }).lastNodeError;
  return cause instanceof Error ? `${error.message} (last node: ${cause.message})` : error.message;
}
