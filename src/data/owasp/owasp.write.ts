// Writes the read OWASP data (inside the caller's transaction), placing chapters and events with
// the offline geocoder. Records that left the files are deactivated, never deleted.
import type { Db } from '../../db/index.ts';
import { geocode, type Point } from '../geocode/geocode.ts';
import { loadGazetteer } from '../geocode/geocode.gazetteer.ts';
import { placeChapter } from '../geocode/chapter-places.ts';
import { emptyCounts, type ResourceCounts } from '../base/resource-counts.ts';
import {
  deactivateMissing,
  deleteOtherLeaderLinks,
  idsByKey,
  upsertByKey,
  upsertLeaderLinks,
  type ActiveTable,
  type KeyedRow,
} from './owasp.queries.ts';
import { chapterRow, committeeRow, eventRow, projectRow, sponsorRow } from './owasp.rows.ts';
import type { LeaderGroup, OwaspData, OwaspReport, OwaspResource } from './owasp.types.ts';

export async function writeOwaspData(db: Db, data: OwaspData): Promise<OwaspReport> {
  const resources: OwaspResource[] = [
    'chapters',
    'committees',
    'projects',
    'events',
    'sponsors',
    'leaders',
    'leaderLinks',
  ];
  const report: OwaspReport = {
    counts: Object.fromEntries(resources.map((name) => [name, emptyCounts()])) as OwaspReport['counts'],
    geocoded: {
      chapters: 0,
      chaptersWithCoordinates: 0,
      activeChapters: 0,
      activeChaptersWithCoordinates: 0,
      events: 0,
      eventsWithCoordinates: 0,
    },
    skippedLeaders: { otherGroups: 0, withoutName: 0, duplicates: 0, unknownGroups: 0 },
  };
  const { counts, geocoded } = report;
  // Read in a worker thread when no one has yet: placing stays synchronous, the event loop is not held for the read.
  if (data.chapters.length > 0 || data.events?.length) await loadGazetteer();

  const chapters = data.chapters.map((chapter) => {
    const location = placeChapter(chapter);
    const point = location.point;
    geocoded.chapters++;
    if (point) geocoded.chaptersWithCoordinates++;
    if (chapter.isActive) geocoded.activeChapters++;
    if (chapter.isActive && point) geocoded.activeChaptersWithCoordinates++;
    return chapterRow(chapter, location);
  });
  counts.chapters = await writeActive(db, 'chapters', chapters);
  if (data.committees) counts.committees = await writeActive(db, 'committees', data.committees.map(committeeRow));
  if (data.projects) counts.projects = await writeActive(db, 'projects', data.projects.map(projectRow));

  if (data.events) {
    const events = data.events.map((event) => {
      const point: Point | null = event.suggestedLocation ? geocode({ name: event.suggestedLocation }) : null;
      geocoded.events++;
      if (point) geocoded.eventsWithCoordinates++;
      return eventRow(event, point);
    });
    // Past events leave the file but stay useful: they are kept as they are.
    counts.events = { total: events.length, ...(await upsertByKey(db, 'events', events)), deactivated: 0 };
  }
  if (data.sponsors) {
    const sponsors = data.sponsors.map(sponsorRow);
    counts.sponsors = { total: sponsors.length, ...(await upsertByKey(db, 'sponsors', sponsors)), deactivated: 0 };
  }
  if (data.leaders) await writeLeaders(db, data.leaders, report);
  return report;
}

async function writeActive<T extends ActiveTable>(
  db: Db,
  table: T,
  rows: readonly KeyedRow<T>[],
): Promise<ResourceCounts> {
  const written = await upsertByKey(db, table, rows);
  const deactivated = await deactivateMissing(
    db,
    table,
    rows.map((row) => row.key),
  );
  return { total: rows.length, ...written, deactivated };
}

async function writeLeaders(db: Db, leaders: NonNullable<OwaspData['leaders']>, report: OwaspReport): Promise<void> {
  const groupIds: Record<LeaderGroup, Map<string, string>> = {
    chapter: await idsByKey(db, 'chapters'),
    committee: await idsByKey(db, 'committees'),
    project: await idsByKey(db, 'projects'),
  };
  // A leader of a group that is not stored has nothing to lead here: not stored either.
  const links = leaders.links.filter((link) => groupIds[link.group].has(link.groupKey));
  const leaderKeys = new Set(links.map((link) => link.leaderKey));
  const rows = leaders.leaders
    .filter((leader) => leaderKeys.has(leader.key))
    .map(({ key, name, githubLogin }) => ({ key, name, github_login: githubLogin }));
  report.skippedLeaders = { ...leaders.skipped, unknownGroups: leaders.links.length - links.length };
  report.counts.leaders = { total: rows.length, ...(await upsertByKey(db, 'leaders', rows)), deactivated: 0 };

  const leaderIds = await idsByKey(db, 'leaders', [...leaderKeys]);
  const counts = report.counts.leaderLinks;
  counts.total = links.length;
  for (const group of ['chapter', 'committee', 'project'] as const) {
    const rows = links
      .filter((link) => link.group === group)
      .map((link) => ({
        leaderId: leaderIds.get(link.leaderKey)!,
        groupId: groupIds[group].get(link.groupKey)!,
        position: link.position,
      }));
    const written = await upsertLeaderLinks(db, group, rows);
    counts.inserted += written.inserted;
    counts.updated += written.updated;
    counts.deactivated += await deleteOtherLeaderLinks(db, group, rows);
  }
}
