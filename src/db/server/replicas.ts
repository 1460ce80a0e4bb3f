// Read replicas (DATABASE_REPLICA_URLS, issue 29, docs/replicas.md). The REST reads (lists, details, search, counts;
// the dumps' builds, dumps.build.ts) run on a streaming replica only when it has replayed the primary's WAL past the position of the newest data version
// this instance knows, otherwise on the primary: never a record removed a moment ago, never a count of before.
// - The position: the data version is read on the primary together with `pg_current_wal_insert_lsn()`, in one
//   statement (counters.queries.ts, readDataVersionAt). The version's commit is visible to that statement, so its WAL
//   record was inserted before the position read; a replica whose `pg_last_wal_replay_lsn()` has passed that position
//   has replayed it. A position taken inside the writing transaction would precede its own commit record.
// - The replicas are polled for their replay position (and asked again at once when a new version is known); a
//   replica is chosen only when its last polled position has passed the newest version's (positions only grow).
// - A replica that errors or cannot be reached is skipped until a poll succeeds RETRY_MS later (its query is run again
//   on the primary: no 5xx), as is one that lags the primary by more than REPLICA_MAX_LAG_MS, or one that is no
//   longer in recovery (promoted: its data went its own way).
// Each replica is opened by openDatabase itself (the caller's `open`), so its pools have the primary's settings: the
// serving pool's and the list pool's statement timeouts, the list queue, DATABASE_POOL_MODE.
import { sql } from 'kysely';
import type { Database, Db } from '../database.ts';
import { routed, type Router } from './read-routing.ts';

declare module '../database.ts' {
  interface Database {
    /**
     * DATABASE_REPLICA_URLS (withReplicas): the replicas, and `db`/`lists` for the REST reads, each query on a replica
     * that is current enough, else on the primary's `db`/`lists`. Unset: everything reads the primary.
     */
    readonly replicas?: Replicas;
  }
}

/** Between polls of each replica's replay position. */
const POLL_MS = 200;
/** After an error, a replica gets no reads for this long, then again once a poll succeeds. */
const RETRY_MS = 2_000;
/** Positions of the primary remembered to tell how far behind a replica is (one a second, from the version's poll). */
const MAX_POSITIONS = 1_000;

export type ReplicaState = 'starting' | 'current' | 'behind' | 'lagging' | 'down' | 'not-standby';
export type SkipReason = 'behind' | 'lagging' | 'down';

export interface ReplicaOptions {
  maxLagMs: number;
  pollMs?: number;
  retryMs?: number;
  clock?: () => number;
}

interface Log {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/** `16/B374D848` (two 32-bit halves in hex) as one number. */
export function parseLsn(text: string): bigint {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** `host:port` of a URL, never its user or password: the replica's label in metrics, logs and /readyz. */
function nameOf(url: string, index: number, taken: Set<string>): string {
  const parsed = new URL(url);
  const name = `${parsed.hostname}:${parsed.port || '5432'}`;
  const unique = taken.has(name) ? `${name}#${index + 1}` : name;
  taken.add(unique);
  return unique;
}

export class Replica {
  /** Its last polled `pg_last_wal_replay_lsn()`. */
  replayed: bigint | undefined;
  reads = 0;
  readonly skipped: Record<SkipReason, number> = { behind: 0, lagging: 0, down: 0 };
  /** Set by an error: no reads until then, and until a poll succeeded after it. */
  downUntil = 0;
  failure: 'down' | 'not-standby' | undefined;
  polled = false;
  polling: Promise<void> | undefined;

  constructor(
    readonly name: string,
    readonly database: Database,
  ) {}
}

/** The primary's WAL insert position (`pg_current_wal_insert_lsn()`) and the sizes that tell where its pages start. */
export interface WalPosition {
  position: string;
  blockSize: number;
  segmentSize: number;
}

/** What the data version's watcher tells the replicas (announcements/data-version.ts). */
export interface PrimaryPositions {
  /** The primary's WAL position read with the data version; `newVersion`: the version moved with this reading. */
  observed(wal: WalPosition, newVersion: boolean): void;
}

/**
 * The insert position as a replay position can reach it. At a page boundary the insert position points past the new
 * page's header (24 bytes, 40 on a segment's first page), where no record can end, while the last record (and a
 * replica's `pg_last_wal_replay_lsn()`) ends at the boundary: the replica would count as behind until the primary
 * writes its next record (on an idle primary, the background writer's snapshot of running transactions, 15 s later).
 */
export function replayable({ position, blockSize, segmentSize }: WalPosition): bigint {
  const at = parseLsn(position);
  const header = at % BigInt(segmentSize) === 40n ? 40n : at % BigInt(blockSize) === 24n ? 24n : 0n;
  return at - header;
}

export class Replicas implements PrimaryPositions, Router<Replica> {
  /** REST details: a current replica's serving pool, else the primary's `db`. */
  readonly db: Db;
  /** REST lists, their counts and the search: a current replica's list pool, else the primary's `lists`. */
  readonly lists: Db;
  /** Reads that found no current replica and ran on the primary. */
  primaryReads = 0;
  /** The position of the newest data version known here: a replica must have replayed it. */
  private needed: bigint | undefined;
  /** Positions of the primary as first seen, ascending: a replica's lag is the age of the first it has not replayed. */
  private positions: { at: bigint; seenAt: number }[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private log: Log | undefined;
  private readonly clock: () => number;

  constructor(
    primary: Database,
    readonly replicas: readonly Replica[],
    private readonly options: ReplicaOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.db = routed(this, primary.db, (replica) => replica.database.db);
    this.lists = routed(this, primary.lists ?? primary.db, (replica) => replica.database.lists ?? replica.database.db);
  }

  /** Polls every replica from now on; their changes of state go to `log`. */
  start(log: Log): void {
    this.log = log;
    if (this.timer) return;
    this.pollAll();
    this.timer = setInterval(() => this.pollAll(), this.options.pollMs ?? POLL_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  observed(wal: WalPosition, newVersion: boolean): void {
    const at = replayable(wal);
    const last = this.positions.at(-1);
    if (!last || at > last.at) {
      this.positions.push({ at, seenAt: this.clock() });
      // The oldest stays: it says since when a replica that replays nothing has been behind.
      if (this.positions.length > MAX_POSITIONS) this.positions.splice(1, 1);
    }
    if (newVersion && (this.needed === undefined || at > this.needed)) {
      this.needed = at;
      // Asked at once rather than at the next poll: reads come back to a replica as soon as it has replayed the change.
      if (!this.timer) return;
      for (const replica of this.replicas)
        if (replica.replayed === undefined || replica.replayed < at) this.poll(replica);
    }
  }

  /** Where the next read runs: a replica current enough (in turn), or undefined for the primary. */
  choose(): Replica | undefined {
    const now = this.clock();
    const count = this.replicas.length;
    for (let i = 0; i < count; i++) {
      const replica = this.replicas[(this.next + i) % count]!;
      const skip = this.skipReason(replica, now);
      if (skip) {
        replica.skipped[skip]++;
        continue;
      }
      this.next = (this.next + i + 1) % count;
      replica.reads++;
      return replica;
    }
    this.primaryReads++;
    return undefined;
  }

  /** A read chosen for `replica` ran on the primary instead (its query failed there). */
  fellBack(replica: Replica): void {
    replica.reads--;
    replica.skipped.down++;
    this.primaryReads++;
  }

  /** A query of `replica` failed for a reason of its own (not the query's): no reads on it for a while. */
  failed(replica: Replica, error: unknown): void {
    replica.downUntil = this.clock() + (this.options.retryMs ?? RETRY_MS);
    this.setFailure(replica, 'down', error);
  }

  /** How long the replica has not replayed a position the primary had: 0 when it has replayed the last one seen. */
  lagMs(replica: Replica, now = this.clock()): number {
    if (replica.replayed === undefined) return this.positions[0] ? now - this.positions[0].seenAt : 0;
    const behind = this.positions.find((position) => position.at > replica.replayed!);
    return behind ? now - behind.seenAt : 0;
  }

  state(replica: Replica, now = this.clock()): ReplicaState {
    if (!replica.polled) return 'starting';
    if (replica.failure) return replica.failure;
    if (replica.downUntil > now) return 'down';
    if (this.lagMs(replica, now) > this.options.maxLagMs) return 'lagging';
    if (this.needed === undefined || replica.replayed === undefined || replica.replayed < this.needed) return 'behind';
    return 'current';
  }

  /** Stops polling and closes the replicas' pools. */
  async close(): Promise<void> {
    this.stop();
    await Promise.all(this.replicas.map((replica) => replica.database.close()));
  }

  private skipReason(replica: Replica, now: number): SkipReason | undefined {
    const state = this.state(replica, now);
    if (state === 'current') return undefined;
    if (state === 'behind' || state === 'lagging') return state;
    return 'down';
  }

  private pollAll(): void {
    for (const replica of this.replicas) this.poll(replica);
  }

  /** One poll of a replica at a time: one that does not answer must not take a connection more at every tick. */
  private poll(replica: Replica): void {
    replica.polling ??= this.readPosition(replica).finally(() => (replica.polling = undefined));
  }

  private async readPosition(replica: Replica): Promise<void> {
    try {
      const { rows } = await sql<{ standby: boolean; replayed: string | null }>`
        select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replayed`.execute(replica.database.db);
      const row = rows[0];
      replica.polled = true;
      if (!row?.standby || row.replayed === null) {
        this.setFailure(replica, 'not-standby', 'not in recovery: a primary, or a promoted replica');
        return;
      }
      replica.replayed = parseLsn(row.replayed);
      this.forgetReplayed();
      if (replica.downUntil <= this.clock() && replica.failure) {
        replica.failure = undefined;
        this.log?.info({ replica: replica.name }, 'read replica available again');
      }
    } catch (error) {
      replica.polled = true;
      this.failed(replica, error);
    }
  }

  /** Positions every replica has replayed tell no lag any more (the last one stays: the next is compared with it). */
  private forgetReplayed(): void {
    let oldest: bigint | undefined;
    for (const { replayed } of this.replicas) {
      if (replayed === undefined) return;
      if (oldest === undefined || replayed < oldest) oldest = replayed;
    }
    let replayed = 0;
    while (replayed < this.positions.length - 1 && this.positions[replayed]!.at <= oldest!) replayed++;
    if (replayed > 0) this.positions.splice(0, replayed);
  }

  private setFailure(replica: Replica, failure: 'down' | 'not-standby', why: unknown): void {
    // Logged when it starts (a replica that was never reachable included), not at every poll while it lasts.
    if (replica.failure !== failure || !replica.polled) {
      const reason = why instanceof Error ? why.message : String(why);
      this.log?.warn({ replica: replica.name, reason }, 'read replica skipped: reading from the primary');
    }
    replica.failure = failure;
  }
}

/**
 * The replicas of `primary` at `urls`, each opened by `open` (openDatabase, hence the primary's pool settings), and
 * `primary` with them (`replicas`); closing it closes them. Nothing connects yet: a replica down at start is skipped.
 */
export async function withReplicas(
  primary: Database,
  urls: readonly string[],
  open: (url: string) => Promise<Database>,
  options: ReplicaOptions,
): Promise<Database> {
  const taken = new Set<string>();
  const opened = await Promise.all(urls.map(open));
  const replicas = new Replicas(
    primary,
    opened.map((database, i) => new Replica(nameOf(urls[i]!, i, taken), database)),
    options,
  );
  return {
    ...primary,
    replicas,
    async close() {
      await replicas.close();
      await primary.close();
    },
  };
}
