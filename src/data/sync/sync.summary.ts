// The one line a sync prints (or logs) when it ends, whatever happened.
import type { ResourceCounts } from '../base/resource-counts.ts';
import type { GithubSyncReport } from './github/github.sync.ts';
import type { OwaspSyncReport } from './owasp/owasp.sync.ts';

/** `issues 3 new, 1 updated; chapters 1 deactivated`, or `no record changed`. */
export function describeCounts(counts: Record<string, ResourceCounts>): string {
  const parts = Object.entries(counts).flatMap(([name, c]) => {
    const changes = [
      [c.inserted, 'new'],
      [c.updated, 'updated'],
      [c.deactivated, 'deactivated'],
    ] as const;
    const said = changes.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
    return said.length ? [`${name} ${said.join(', ')}`] : [];
  });
  return parts.length ? parts.join('; ') : 'no record changed';
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const version = (r: { changed: boolean; dataVersion: number }) =>
  r.changed ? `data version ${r.dataVersion}` : 'data version unchanged';

export function githubSummary(r: GithubSyncReport): string {
  const notModified = r.requests.statuses['304'] ?? 0;
  const failed = r.failed.length ? `, ${r.failed.length} skipped (unreadable data)` : '';
  return (
    `GitHub sync: ${r.organizations} organizations, ${r.repositories} repositories${failed}; ` +
    `${r.requests.total} requests (${notModified} not modified); ${describeCounts(r.counts)}; ${version(r)}; ${seconds(r.durationMs)}`
  );
}

export function owaspSummary(r: OwaspSyncReport): string {
  const statuses = Object.values(r.files);
  const downloaded = statuses.filter((s) => s === 'downloaded').length;
  const files = statuses.includes('read')
    ? `files read from ${r.source}`
    : `${downloaded} of ${statuses.length} files downloaded`;
  const records = r.owasp ? describeCounts(r.owasp.counts) : 'no file changed';
  return `OWASP website sync: ${files}; ${records}; ${version(r)}; ${seconds(r.durationMs)}`;
}
