// One version per GitHub id. The same account, repository or issue shows up in many responses, from
// full objects to embedded stubs, recorded years apart.
import { isApiObject } from './github.fields.ts';

interface Rank {
  updatedAt: string | null;
  fields: number;
}

export class Versions<T extends { github_id: number }> {
  readonly #byId = new Map<number, { record: T; rank: Rank }>();

  /** Keeps `record` (mapped from `api`) if it is newer, or as new and more complete, than the one held. */
  add(record: T, api: unknown): T {
    return this.addCounted(record, fieldCount(api));
  }

  /** As add, given the number of fields of the API object (counted when it was read: the object is not kept). */
  addCounted(record: T, fields: number): T {
    const rank = rankOf(record, fields);
    const held = this.#byId.get(record.github_id);
    if (!held || better(rank, held.rank)) this.#byId.set(record.github_id, { record, rank });
    return this.#byId.get(record.github_id)!.record;
  }

  get(githubId: number): T | undefined {
    return this.#byId.get(githubId)?.record;
  }

  records(): T[] {
    return [...this.#byId.values()].map((version) => version.record);
  }
}

/** Non-null fields of an API object: the more complete of two versions has more. */
export function fieldCount(api: unknown): number {
  return isApiObject(api) ? Object.values(api).filter((v) => v !== null && v !== undefined).length : 0;
}

function rankOf(record: object, fields: number): Rank {
  const updatedAt = 'updated_at' in record && typeof record.updated_at === 'string' ? record.updated_at : null;
  return { updatedAt, fields };
}

// Timestamps are normalized ISO strings, so they compare as text. Without two of them to compare,
// the object with more fields wins (a full user beats the stub embedded in an issue); a tie keeps the first.
function better(candidate: Rank, held: Rank): boolean {
  if (candidate.updatedAt && held.updatedAt && candidate.updatedAt !== held.updatedAt) {
    return candidate.updatedAt > held.updatedAt;
  }
  return candidate.fields > held.fields;
}
