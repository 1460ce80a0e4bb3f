// What the scheduled sync does: SYNC_INTERVAL, SYNC_GITHUB_ORGS, SYNC_OWASP_FROM and
// SYNC_GITHUB_REQUESTS_PER_MINUTE, read by config.ts.
export interface SyncSettings {
  /** Time between scheduled runs; undefined: `serve` never syncs. */
  readonly intervalMs: number | undefined;
  /** Organizations the scheduled GitHub sync mirrors; empty: no GitHub sync. */
  readonly githubOrgs: readonly string[];
  /** Base URL or folder of the OWASP website's data files; undefined: no website sync. */
  readonly owaspFrom: string | undefined;
  /** GitHub requests started per minute at most by a sync (scheduled or `cds sync github`); 0: no pacing; unset: 600. */
  readonly githubRequestsPerMinute?: number;
}

/** The OWASP website's `_data` folder, where `cds sync owasp` reads when no source is given. */
export const OWASP_DATA_URL = 'https://raw.githubusercontent.com/OWASP/owasp.github.io/main/_data/';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/** `90`, `90s`, `30m`, `1h`, `1d` → milliseconds; null when the text is not such a duration. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,9})\s*([smhd]?)$/i.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * UNITS[(match[2] || 's').toLowerCase()]! * 1_000;
}
