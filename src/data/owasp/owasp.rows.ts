// Records → table rows. Every row of one table lists the same columns (the upsert relies on it).
import type { Insertable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { ChapterLocation } from '../geocode/chapter-places.ts';
import type { Point } from '../geocode/geocode.ts';
import type { ChapterRecord, CommitteeRecord, EventRecord, ProjectRecord, SponsorRecord } from './owasp.types.ts';

// Contribution data is not in the website files: the import never writes it.
type ChapterRow = Omit<Insertable<DB['chapters']>, 'contribution_data' | 'contribution_stats'>;

export function chapterRow(
  chapter: ChapterRecord,
  { point, country, countryCode, region }: ChapterLocation,
): ChapterRow {
  return {
    key: chapter.key,
    name: chapter.name,
    description: chapter.description,
    url: chapter.url,
    country,
    country_code: countryCode,
    region,
    level: chapter.level,
    meetup_group: chapter.meetupGroup,
    related_urls: JSON.stringify(chapter.relatedUrls),
    is_active: chapter.isActive,
    latitude: point?.latitude ?? null,
    longitude: point?.longitude ?? null,
    created_at: chapter.createdAt,
    updated_at: chapter.updatedAt,
  };
}

export function committeeRow(committee: CommitteeRecord): Insertable<DB['committees']> {
  return {
    key: committee.key,
    name: committee.name,
    description: committee.description,
    url: committee.url,
    is_active: committee.isActive,
    created_at: committee.createdAt,
    updated_at: committee.updatedAt,
  };
}

export function projectRow(project: ProjectRecord): Insertable<DB['projects']> {
  return {
    ...committeeRow(project),
    level: project.level,
    type: project.type,
    repository_paths: JSON.stringify(project.repositoryPaths),
  };
}

export function eventRow(event: EventRecord, point: Point | null): Insertable<DB['events']> {
  // The file has no record dates; the start date keeps them stable from one import to the next.
  const stamp = `${event.startDate}T00:00:00.000Z`;
  return {
    key: event.key,
    name: event.name,
    description: event.description,
    summary: event.summary,
    category: event.category,
    start_date: event.startDate,
    end_date: event.endDate,
    url: event.url,
    suggested_location: event.suggestedLocation,
    latitude: point?.latitude ?? null,
    longitude: point?.longitude ?? null,
    created_at: stamp,
    updated_at: stamp,
  };
}

export function sponsorRow(sponsor: SponsorRecord): Insertable<DB['sponsors']> {
  return {
    key: sponsor.key,
    name: sponsor.name,
    sort_name: sponsor.sortName,
    sponsor_type: sponsor.sponsorType,
    description: sponsor.description,
    url: sponsor.url,
    image_url: sponsor.imageUrl,
    job_url: sponsor.jobUrl,
    is_member: sponsor.isMember,
    member_type: sponsor.memberType,
  };
}
