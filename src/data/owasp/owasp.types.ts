// The OWASP website data after reading and validation: what the importer writes, per table.
import type { EventCategory, ProjectLevel, ProjectType } from '../../db/schema.ts';
import type { ResourceCounts } from '../base/resource-counts.ts';

interface Dated {
  /** ISO timestamp at midnight UTC. */
  createdAt: string;
  updatedAt: string;
}

export interface ChapterRecord extends Dated {
  key: string;
  name: string;
  description: string;
  url: string;
  country: string;
  region: string;
  level: string;
  meetupGroup: string;
  relatedUrls: string[];
  isActive: boolean;
  /** Place names for the geocoder: the chapter's title and name without "OWASP" and "Chapter". */
  placeNames: string[];
}

export interface CommitteeRecord extends Dated {
  key: string;
  name: string;
  description: string;
  url: string;
  isActive: boolean;
}

export interface ProjectRecord extends CommitteeRecord {
  level: ProjectLevel;
  type: ProjectType;
  /** Lower-case `owner/name` of its GitHub repositories. */
  repositoryPaths: string[];
}

export interface EventRecord {
  key: string;
  name: string;
  description: string;
  summary: string;
  category: EventCategory;
  /** YYYY-MM-DD */
  startDate: string;
  endDate: string | null;
  url: string;
  suggestedLocation: string;
}

export interface SponsorRecord {
  key: string;
  name: string;
  sortName: string;
  sponsorType: string;
  description: string;
  url: string;
  imageUrl: string;
  jobUrl: string;
  isMember: boolean;
  memberType: string;
}

export type LeaderGroup = 'chapter' | 'committee' | 'project';

export interface LeaderRecord {
  key: string;
  name: string;
  /** The GitHub login when the website names the leader's GitHub profile; '' otherwise. */
  githubLogin: string;
}

export interface LeaderLink {
  leaderKey: string;
  group: LeaderGroup;
  groupKey: string;
  /** Order of the leader within the group, as listed (0 first). */
  position: number;
}

/** Each list is absent when its file is: nothing of that kind is then written or deactivated. */
export interface OwaspData {
  chapters: ChapterRecord[];
  committees?: CommitteeRecord[] | undefined;
  projects?: ProjectRecord[] | undefined;
  events?: EventRecord[] | undefined;
  sponsors?: SponsorRecord[] | undefined;
  leaders?: { leaders: LeaderRecord[]; links: LeaderLink[]; skipped: LeaderSkips } | undefined;
}

export interface LeaderSkips {
  /** Entries of events or other groups that have no table (www-revent-…). */
  otherGroups: number;
  /** Entries with an empty name. */
  withoutName: number;
  /** The same person listed twice for one group. */
  duplicates: number;
  /** Entries whose chapter, committee or project is not in the database. */
  unknownGroups: number;
}

export type OwaspResource = 'chapters' | 'committees' | 'projects' | 'events' | 'sponsors' | 'leaders' | 'leaderLinks';

export interface OwaspReport {
  /** `leaderLinks` are the entity_leaders rows; links that vanished are deleted and counted as deactivated. */
  counts: Record<OwaspResource, ResourceCounts>;
  geocoded: {
    /** Chapters read (active or not), and how many of them got coordinates. */
    chapters: number;
    chaptersWithCoordinates: number;
    activeChapters: number;
    activeChaptersWithCoordinates: number;
    events: number;
    eventsWithCoordinates: number;
  };
  skippedLeaders: LeaderSkips;
}
