/** What an import or sync did to one resource. */
export interface ResourceCounts {
  /** Records read from the source. */
  total: number;
  inserted: number;
  /** Existing rows whose stored values changed. */
  updated: number;
  /** Rows that disappeared from the source and were marked inactive (never deleted). */
  deactivated: number;
}

export function emptyCounts(): ResourceCounts {
  return { total: 0, inserted: 0, updated: 0, deactivated: 0 };
}

/** Rows written: zero means the run changed nothing. */
export function changedRows(counts: Record<string, ResourceCounts>): number {
  return Object.values(counts).reduce((sum, c) => sum + c.inserted + c.updated + c.deactivated, 0);
}
