// The reviewed places of the chapters the gazetteer cannot place from their name (institutions, national
// and state chapters, homonyms), kept in chapter-places.json with the source of each entry. Import and
// sync place a chapter listed there at that city; the others go through the gazetteer as before.
import table from './chapter-places.json' with { type: 'json' };
import { countryCode, countryName, countryRegion } from '../../geo/countries.ts';
import { locate, type Point } from './geocode.ts';

export interface ChapterPlace {
  city: string;
  /** State or province, to tell homonyms apart ("Somerset", Kentucky). */
  region?: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** Where the entry comes from: the website data's own text, or the institution's known city. */
  source: string;
}

export const CHAPTER_PLACES: Readonly<Record<string, ChapterPlace>> = table;

export interface ChapterInput {
  key: string;
  /** Place names from the chapter's title and name. */
  placeNames: readonly string[];
  country: string;
  region: string;
}

export interface ChapterLocation {
  point: Point | null;
  /** ISO 3166-1 alpha-2, or '' when the country is unknown. */
  countryCode: string;
  /** The canonical name of that country; the data's own text when unknown. */
  country: string;
  /** The data's region, else the country's continent. */
  region: string;
}

export function placeChapter(chapter: ChapterInput): ChapterLocation {
  const listed = CHAPTER_PLACES[chapter.key.toLowerCase()];
  let code = listed?.country ?? countryCode(chapter.country) ?? '';
  let point: Point | null = null;
  if (listed) {
    // The state narrows homonyms; a state the gazetteer does not know leaves the country alone as the fallback.
    const found =
      locate({ name: listed.city, region: listed.region, country: code }) ??
      locate({ name: listed.city, country: code });
    point = found && { latitude: found.latitude, longitude: found.longitude };
  } else {
    const [name, ...altNames] = chapter.placeNames;
    const found = locate({ name, altNames, country: code || chapter.country, region: chapter.region });
    if (found) {
      point = { latitude: found.latitude, longitude: found.longitude };
      code ||= found.countryCode;
    }
  }
  return {
    point,
    countryCode: code,
    country: code ? countryName(code) : chapter.country,
    region: chapter.region || (code ? countryRegion(code) : ''),
  };
}
