// Offline geocoding of the free-text places of the community data ("London", "Portland, Maine",
// "San Francisco, CA", "Germany"): city first, then state or region, then country.
import type { City, Country, Point, Region } from './geocode.gazetteer.ts';
import { continentZones, findCity, findCountry, findRegion, resolveCountry, resolveRegion } from './geocode.match.ts';
import { innerNames, parsePlace } from './geocode.parse.ts';

export type { Point } from './geocode.gazetteer.ts';

export interface GeocodeQuery {
  /** A city, state or country name, possibly qualified: "Portland, Maine", "Atlanta, GA", "Vienna, Austria". */
  name?: string | undefined;
  /** Other names of the same place, tried after `name` at each level. */
  altNames?: readonly string[] | undefined;
  /** Country name or ISO code; cities are searched only there when it is known. */
  country?: string | undefined;
  /** A state or province, or a continent ("Europe") that narrows the search while the country is unknown. */
  region?: string | undefined;
}

export type PlaceLevel = 'city' | 'region' | 'country';

export interface Placement extends Point {
  level: PlaceLevel;
  /** The gazetteer's name of the place found. */
  place: string;
  countryCode: string;
}

// A state beats a same-named city that is smaller than this and not a capital ("Delaware" is the
// state, not Delaware, Ohio).
const SMALL_CITY = 100_000;
// A town guessed from inside a longer name ("Bahria University Lahore") must be at least this big.
const GUESS_MIN_POPULATION = 20_000;

export function geocode(query: GeocodeQuery): Point | null {
  const placement = locate(query);
  return placement ? { latitude: placement.latitude, longitude: placement.longitude } : null;
}

/** Like `geocode`, and tells which place was chosen and at what level (for reports and tests). */
export function locate(query: GeocodeQuery): Placement | null {
  const country = resolveCountry(query.country);
  const continent = continentZones(query.region);
  const zones = country ? undefined : continent;
  const region = continent ? undefined : resolveRegion(query.region, country);
  const texts = [query.name, ...(query.altNames ?? [])].filter((text): text is string => !!text?.trim());
  const candidates = texts.flatMap((text) => parsePlace(text, { country, region, zones }));

  for (const { key, scope } of candidates) {
    const city = findCity(key, scope);
    if (!city) continue;
    // "Costa Rica" is the country, not a town of that name in Brazil.
    const named = findCountry(key);
    if (named && named.code !== city.country) return countryPlacement(named);
    const state =
      !city.isCapital && city.population < SMALL_CITY ? findRegion(key, { country: scope.country }) : undefined;
    return state && state.country === city.country ? regionPlacement(state) : cityPlacement(city);
  }
  for (const { key, scope } of candidates) {
    const state = findRegion(key, scope);
    if (state) return regionPlacement(state);
  }
  for (const { key } of candidates) {
    const found = findCountry(key);
    if (found) return countryPlacement(found);
  }
  // Last, a place named inside a longer name: "Indian Institute of Technology Patna" → Patna.
  for (const { key, scope } of candidates) {
    for (const gram of innerNames(key)) {
      const city = findCity(gram, { ...scope, minPopulation: GUESS_MIN_POPULATION });
      if (city) return cityPlacement(city);
      const state = findRegion(gram, scope);
      if (state) return regionPlacement(state);
      const named = findCountry(gram);
      if (named && (!scope.country || scope.country === named)) return countryPlacement(named);
    }
  }
  return null;
}

function cityPlacement(city: City): Placement {
  return {
    latitude: city.latitude,
    longitude: city.longitude,
    level: 'city',
    place: city.name,
    countryCode: city.country,
  };
}

function regionPlacement(region: Region): Placement {
  return {
    latitude: region.latitude,
    longitude: region.longitude,
    level: 'region',
    place: region.name,
    countryCode: region.country,
  };
}

function countryPlacement(country: Country): Placement {
  return {
    latitude: country.latitude,
    longitude: country.longitude,
    level: 'country',
    place: country.name,
    countryCode: country.code,
  };
}
