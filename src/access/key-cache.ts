// Valid API keys are remembered in memory for a short while, so a cached read needs no database
// round trip. A revocation, here or on another instance, empties it (src/announcements/heard.ts
// tells it: at once in the revoking process, before the next request with Redis, within a second
// through the database otherwise).
import type { KeyCache, KeyIdentity } from '../api-keys/api-keys.service.ts';
import { EmptiedMap } from '../memory-budget.ts';

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  identity: KeyIdentity;
  /** Until when the entry may be used: the key's expiry or the TTL, whichever comes first. */
  until: number;
}

export class ValidKeys implements KeyCache {
  /** Emptied when full: by entries, or by the memos' share of the memory budget. */
  private entries = new EmptiedMap<Entry>(MAX_ENTRIES);
  private emptied = 0;

  get generation(): number {
    return this.emptied;
  }

  get(raw: string, now: number): KeyIdentity | undefined {
    const entry = this.entries.get(raw);
    if (!entry) return undefined;
    if (entry.until > now) return entry.identity;
    this.entries.delete(raw);
    return undefined;
  }

  /** Remembers a key the database found valid, unless the memory was emptied since it was asked. */
  set(raw: string, identity: KeyIdentity, expiresAt: Date, generation: number, now: number): void {
    if (generation !== this.emptied) return;
    this.entries.set(raw, { identity, until: Math.min(expiresAt.getTime(), now + TTL_MS) });
  }

  clear(): void {
    this.entries.clear();
    this.emptied++;
  }
}
