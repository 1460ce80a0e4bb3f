// The countries and states of the gazetteer (geocode.areas.json, made by scripts/geocode-areas.ts), indexed by
// normalized name. Built with the cities in the gazetteer's worker thread (geocode.worker.ts): plain Maps and objects
// that reach the main thread in one message, each object once (a state is the same in both of its Maps).
import areas from './geocode.areas.json' with { type: 'json' };
import { COUNTRY_ALIASES, normalizePlace } from '../../geo/place-names.ts';
import { COUNTRY_NAMES } from './geocode.names.ts';

export interface Point {
  latitude: number;
  longitude: number;
}

export interface Region extends Point {
  name: string;
  country: string;
  /** GeoNames admin-1 code, as the cities' `admin` (the postal code in the US: `CA`); a UK county's: `ENG.Q4`. */
  code: string;
}

export interface Country extends Point {
  name: string;
  code: string;
  /** Time-zone names ("Europe/Vienna"), which tell the continent. */
  zones: readonly string[];
}

export interface Areas {
  /** Normalized name (also without "Province", "Prefecture", …) → states. */
  regions: ReadonlyMap<string, readonly Region[]>;
  /** `US:CA` → California. */
  regionsByCode: ReadonlyMap<string, Region>;
  /** Normalized name or alias → country. */
  countries: ReadonlyMap<string, Country>;
  countriesByCode: ReadonlyMap<string, Country>;
}

// The rows of geocode.areas.json (its `countryColumns` and `regionColumns`).
type CountryRow = [code: string, names: string[], latitude: number, longitude: number, zones: string[]];
type RegionRow = [country: string, code: string, name: string, latitude: number, longitude: number];

const REGION_SUFFIX = / (prefecture|province|region|state|district|governorate|county|oblast|department|voivodeship)$/;

export function buildAreas(): Areas {
  const regions = new Map<string, Region[]>();
  const regionsByCode = new Map<string, Region>();
  const shortNames: Array<[string, Region]> = [];
  for (const [country, code, name, latitude, longitude] of areas.regions as RegionRow[]) {
    const region: Region = { name, country, code, latitude, longitude };
    const key = normalizePlace(name);
    push(regions, key, region);
    regionsByCode.set(`${country}:${code}`, region);
    const short = key.replace(REGION_SUFFIX, '');
    if (short !== key) shortNames.push([short, region]);
  }
  // Exact names first: "Maryland" is the US state before Liberia's "Maryland County".
  for (const [short, region] of shortNames) push(regions, short, region);

  const countries = new Map<string, Country>();
  const countriesByCode = new Map<string, Country>();
  for (const [code, names, latitude, longitude, zones] of areas.countries as CountryRow[]) {
    const country: Country = { name: names[0]!, code, zones, latitude, longitude };
    countriesByCode.set(code, country);
    for (const name of names) if (!countries.has(normalizePlace(name))) countries.set(normalizePlace(name), country);
  }
  for (const [alias, code] of Object.entries({ ...COUNTRY_ALIASES, ...COUNTRY_NAMES })) {
    const country = countriesByCode.get(code);
    if (country && !countries.has(alias)) countries.set(alias, country);
  }
  return { regions, regionsByCode, countries, countriesByCode };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
