// Writes another instance's dumps into this (empty) database, inside the caller's import transaction: every dump of
// ROW_DUMPS becomes rows of its table, batch by batch as its file is read (memory holds one batch), each record after
// those it refers to; the releases the snapshots count are marked, and the chapters' country codes derived.
import type { Db } from '../../../db/index.ts';
import { countryCode } from '../../../geo/countries.ts';
import { ImportError } from '../../base/import-error.ts';
import { emptyCounts, type ResourceCounts } from '../../base/resource-counts.ts';
import { GITHUB_RESOURCES, type GithubReport } from '../../github/github.records.ts';
import type { OwaspReport, OwaspResource } from '../../owasp/owasp.types.ts';
import {
  chapterCountries,
  insertLeaders,
  insertProjectHealth,
  insertRows,
  linesParameter,
  markCountedReleases,
  placedCounts,
  REQUIRED_EXTRAS,
  ROW_DUMPS,
  setCountryCodes,
  settleReleases,
} from './dump-rows.queries.ts';
import { insertIssueLinks } from './issue-links.queries.ts';
import { readDumpLines, readSourceManifest, type DumpSourceOptions } from './dumps.source.ts';

/** The dump of the releases each snapshot counts: it only marks releases (settleReleases). */
const COUNTED_RELEASES = 'snapshot-releases';

/** What an issue's labels and assignees must name (issue-links.queries.ts). */
const LINKED = { labels: "names of labels of the issue's repository", assignees: 'logins' } as const;

export interface DumpsLoaded {
  owasp: OwaspReport;
  github: GithubReport;
  /** The source's address and the data version of its dumps. */
  source: { url: string; dataVersion: number };
  /** Tombstones (`/api/v0/deleted/`) and the releases the snapshots count, as read. */
  tombstones: number;
  countedReleases: number;
  /** The projects whose stored health the projects dump carried (written as the source's). */
  healthRows: number;
}

export async function loadDumps(
  trx: Db,
  options: DumpSourceOptions,
  onDump: (resource: string) => void = () => {},
): Promise<DumpsLoaded> {
  const manifest = await readSourceManifest(options);
  const byResource = new Map(manifest.items.map((item) => [item.resource, item]));
  const wanted = [...ROW_DUMPS, COUNTED_RELEASES];
  const missing = wanted.filter((resource) => !byResource.has(resource));
  if (missing.length > 0)
    throw new ImportError(
      manifest.url,
      undefined,
      `the source's dumps lack ${missing.join(', ')}: a different version?`,
    );
  // Stored fields that filters read, which the detail leaves out: without them a copy answers those differently.
  const lacking = wanted.flatMap((resource) => {
    const carried = new Set(byResource.get(resource)!.extra_fields ?? []);
    const lack = (REQUIRED_EXTRAS[resource] ?? []).filter((field) => !carried.has(field));
    return lack.length > 0 ? [`${resource}: ${lack.join(', ')}`] : [];
  });
  if (lacking.length > 0)
    throw new ImportError(
      manifest.url,
      undefined,
      `the source's dumps lack stored fields that filters, the search or orderings read (${lacking.join('; ')}), so ` +
        `a copy would answer those differently: the source runs an older version (dumps format ` +
        `${manifest.format ?? 1}); update it, let it build its dumps again, then import`,
    );
  const counts = new Map<string, ResourceCounts>();
  const leaders = { leaders: 0, links: 0 };
  let countedReleases = 0;
  let healthRows = 0;
  for (const resource of wanted) {
    const item = byResource.get(resource)!;
    let read = 0;
    for await (const batch of readDumpLines(manifest, item, options)) {
      const lines = linesParameter(batch);
      const written =
        resource === COUNTED_RELEASES
          ? await markCountedReleases(trx, lines)
          : await insertRows(trx, resource, lines, read);
      if (written !== batch.length)
        throw new ImportError(
          `${resource}.ndjson.gz`,
          undefined,
          `${batch.length - written} of ${batch.length} records name a repository or release that the other dumps do not hold`,
        );
      if (resource === 'issues') {
        const links = await insertIssueLinks(trx, lines);
        for (const [kind, { named, written: linked }] of Object.entries(links))
          if (linked !== named)
            throw new ImportError(
              `${resource}.ndjson.gz`,
              undefined,
              `${named - linked} of ${named} ${kind} of issues are not ${LINKED[kind as keyof typeof links]}`,
            );
      }
      if (resource === 'projects') {
        const health = await insertProjectHealth(trx, lines);
        if (health.without > 0)
          throw new ImportError(
            `${resource}.ndjson.gz`,
            undefined,
            `${health.without} of ${batch.length} projects lack their stored health (extra.health)`,
          );
        healthRows += health.written;
      }
      if (resource === 'chapters' || resource === 'projects') {
        const added = await insertLeaders(trx, resource, lines);
        leaders.leaders += added.leaders;
        leaders.links += added.links;
      }
      read += batch.length;
    }
    if (resource === COUNTED_RELEASES) countedReleases = read;
    else counts.set(resource, { total: read, inserted: read, updated: 0, deactivated: 0 });
    onDump(resource);
  }
  await settleReleases(trx);
  const countries = await chapterCountries(trx);
  await setCountryCodes(
    trx,
    countries.map((country): [string, string] => [country, countryCode(country) ?? '']),
  );
  const counted = (resource: string) => counts.get(resource) ?? emptyCounts();
  const placed = await placedCounts(trx);
  const owaspCounts = Object.fromEntries(
    (['chapters', 'committees', 'projects', 'events', 'sponsors'] as const).map((r) => [r, counted(r)]),
  ) as Record<OwaspResource, ResourceCounts>;
  owaspCounts.leaders = { total: leaders.leaders, inserted: leaders.leaders, updated: 0, deactivated: 0 };
  owaspCounts.leaderLinks = { total: leaders.links, inserted: leaders.links, updated: 0, deactivated: 0 };
  return {
    owasp: {
      counts: owaspCounts,
      geocoded: {
        chapters: placed.chapters,
        chaptersWithCoordinates: placed.chapters,
        activeChapters: placed.chapters,
        activeChaptersWithCoordinates: placed.chapters,
        events: placed.events,
        eventsWithCoordinates: placed.eventsPlaced,
      },
      skippedLeaders: { otherGroups: 0, withoutName: 0, duplicates: 0, unknownGroups: 0 },
    },
    github: Object.fromEntries(GITHUB_RESOURCES.map((r) => [r, { ...counted(r), skipped: 0 }])) as GithubReport,
    source: { url: manifest.url, dataVersion: Math.max(...manifest.items.map((item) => item.data_version)) },
    tombstones: counted('deleted').total,
    countedReleases,
    healthRows,
  };
}
