// The key rules of the stream of changes (docs/changes.md, "The stream"), beside the gate that authenticates and
// counts its opening like any keyed request: at most CHANGES_STREAMS_PER_KEY open streams per key on an instance
// (one more is 429), and a key's streams end within seconds of it being revoked or expiring. Revocations reach every
// instance as they reach its memory of valid keys (announcements/heard.ts: at once here, through Redis or the
// database within a second elsewhere); then the keys of the open streams are read again. Expiry is watched at every
// poll of the hub, on the app's clock.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import type { SharedChanges } from '../announcements/heard.ts';
import type { KeyIdentity } from '../api-keys/api-keys.service.ts';
import { findUnrevokedKeysById } from '../api-keys/api-keys.queries.ts';
import type { ChangeHub } from '../changes/change-hub.ts';
import { TooManyStreamsError, UnauthorizedError } from '../errors.ts';

export interface StreamKeysOptions {
  db: Db;
  hub: ChangeHub;
  changes: SharedChanges;
  /** CHANGES_STREAMS_PER_KEY. */
  perKey: number;
  log: FastifyBaseLogger;
}

export class StreamKeys {
  /** Streams admitted and not yet open (their opening reads the database), by key id. */
  private readonly admitting = new Map<string, number>();
  /** A revocation was heard and the keys not yet read again (the database did not answer). */
  private stale = false;
  private checking: Promise<void> | undefined;

  constructor(private readonly options: StreamKeysOptions) {
    options.changes.onRevocation(() => {
      this.stale = true;
      void this.recheck();
    });
    options.hub.onTick(() => {
      if (this.stale) void this.recheck();
    });
  }

  /**
   * Admits one more stream of the request's key (a key is required, whatever REST_AUTH says), or throws 401 or 429.
   * The returned function gives the place back once the stream is open (the hub counts it then) or failed to open.
   */
  admit(identity: KeyIdentity | undefined): () => void {
    if (!identity) throw new UnauthorizedError();
    const { keyId } = identity;
    const admitting = this.admitting.get(keyId) ?? 0;
    if (this.options.hub.streamsOf(keyId).length + admitting >= this.options.perKey)
      throw new TooManyStreamsError(this.options.perKey);
    this.admitting.set(keyId, admitting + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.admitting.get(keyId) ?? 1) - 1;
      if (left > 0) this.admitting.set(keyId, left);
      else this.admitting.delete(keyId);
    };
  }

  /**
   * Reads the keys of the open streams again: a revoked one's streams end; a rotated one's end at its new expiry, and an
   * expired one's at the hub's next poll, as expired (a revocation heard again, through the database, after a key of
   * an open stream expired is no reason to call that key revoked).
   */
  private recheck(): Promise<void> {
    this.checking ??= (async () => {
      const { db, hub, log } = this.options;
      this.stale = false;
      const owners = [...hub.owners()];
      if (owners.length === 0) return;
      try {
        const unrevoked = new Map(
          (await findUnrevokedKeysById(db, owners)).map((key) => [String(key.id), key.expires_at]),
        );
        for (const owner of owners) {
          const expiresAt = unrevoked.get(owner);
          for (const stream of hub.streamsOf(owner)) {
            if (expiresAt) stream.until = Math.min(stream.until, expiresAt.getTime());
            else stream.end('revoked');
          }
        }
      } catch (error) {
        // Tried again at the hub's next poll.
        this.stale = true;
        log.debug({ err: error }, 'keys of the streams not readable');
      }
    })().finally(() => (this.checking = undefined));
    return this.checking;
  }
}
