// Where OWASP is missing (issue 47, item 7; docs/contribute.md): the large cities of the offline gazetteer with no
// active chapter within a radius, each with its nearest chapter. Computed in memory: a few thousand cities against a
// few hundred chapters, great-circle distances (the gazetteer's haversine).
import { countryName } from '../../../geo/countries.ts';
import { distanceKm, loadGazetteer, type City } from '../../../data/geocode/geocode.gazetteer.ts';

/** The bounds of the parameters (docs/contribute.md): below 100,000 people the gazetteer's list grows past 4,000. */
export const GAP_BOUNDS = {
  minPopulation: { minimum: 100_000, maximum: 50_000_000, default: 1_000_000 },
  radiusKm: { minimum: 1, maximum: 20_000, default: 100 },
} as const;

export interface Gap {
  name: string;
  country: string;
  population: number;
  latitude: number;
  longitude: number;
  nearest_chapter: { key: string; distance_km: number } | null;
}

export interface PlacedChapter {
  key: string;
  latitude: number;
  longitude: number;
}

// The cities of at least the smallest population asked for, largest first: read once from the gazetteer (~1 s in a
// worker thread the first time) and kept (a few thousand small objects); the gazetteer itself may be let go.
let large: Promise<City[]> | undefined;

function largeCities(): Promise<City[]> {
  large ??= loadGazetteer().then(
    (gazetteer) => gazetteer.cities.atLeast(GAP_BOUNDS.minPopulation.minimum).sort(byPopulation),
    (error: unknown) => {
      large = undefined;
      throw error;
    },
  );
  return large;
}

/** Largest first; then by name, country and position, so that the order is total. */
function byPopulation(a: City, b: City): number {
  return (
    b.population - a.population ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.country < b.country ? -1 : a.country > b.country ? 1 : 0) ||
    a.latitude - b.latitude ||
    a.longitude - b.longitude
  );
}

/** The nearest chapter (the first key among equals) and its distance, or undefined when there is none. */
export function nearestChapter(point: { latitude: number; longitude: number }, chapters: readonly PlacedChapter[]) {
  let best: { key: string; distance: number } | undefined;
  for (const chapter of chapters) {
    const distance = distanceKm(point, chapter);
    if (!best || distance < best.distance) best = { key: chapter.key, distance };
  }
  return best;
}

/** The cities of at least `minPopulation` people with no chapter within `radiusKm` (strictly nearer), largest first. */
export async function chapterGaps(
  chapters: readonly PlacedChapter[],
  minPopulation: number,
  radiusKm: number,
): Promise<Gap[]> {
  const gaps: Gap[] = [];
  for (const city of await largeCities()) {
    // Largest first: the rest are smaller.
    if (city.population < minPopulation) break;
    const nearest = nearestChapter(city, chapters);
    if (nearest && nearest.distance <= radiusKm) continue;
    gaps.push({
      name: city.name,
      country: countryName(city.country) || city.country,
      population: city.population,
      latitude: city.latitude,
      longitude: city.longitude,
      nearest_chapter: nearest ? { key: nearest.key, distance_km: Math.round(nearest.distance * 10) / 10 } : null,
    });
  }
  return gaps;
}
