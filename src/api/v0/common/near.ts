// Nearest first: `near=LAT,LON` (and `radius_km`) on the lists of places (chapters, events; issue 27). Records are
// ordered by their distance from the point, nearest first, and each item gains `distance_km`. The order is that of
// the chord between points of the unit sphere (`earth <-> point`, migration 0012), which grows with the great-circle
// distance: a GiST index scan gives the nearest records first and stops after the page. The radius bounds the same
// index with the cube around the sphere's cap, then the exact chord.
import { sql, type RawBuilder } from 'kysely';
import { Type } from '@sinclair/typebox';
import { InvalidRequestError, invalidParam } from '../../../errors.ts';
import type { OrderTerm } from './ordering.ts';
import type { ListQuery } from './pagination.ts';
import { DECIMAL } from './query.ts';

/** The mean radius of the Earth in km (IUGG), the one of every great-circle distance here. */
export const EARTH_RADIUS_KM = 6371.0088;
/** Half the Earth's circumference: no two points are farther apart. */
export const MAX_RADIUS_KM = 20_016;

export const NEAR_FIELD = 'distance_km';
export const DISTANCE_ORDERING = 'distance';

export const NearParams = {
  near: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        '`LAT,LON` in decimal degrees (WGS 84), e.g. `52.37,4.90`: the records nearest this point first, each with ' +
        '`distance_km` (great-circle, to 0.1 km); only records with coordinates, and `count` counts them (within ' +
        '`radius_km` when given). The other filters, `fields`, the cursor and GeoJSON still apply; `ordering` may name ' +
        '`distance` (the default with `near`) or another field.',
      examples: ['52.37,4.90'],
    }),
  ),
  radius_km: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_RADIUS_KM,
      description: `Only records within this great-circle distance of \`near\`, in km (above 0, at most ${MAX_RADIUS_KM.toLocaleString('en')}). Needs \`near\`.`,
    }),
  ),
};

export interface NearPoint {
  latitude: number;
  longitude: number;
  radiusKm?: number;
}

/** The point of `near` and the radius, or undefined without `near`; 400 for a malformed or out-of-range value. */
export function readNear(query: { near?: string; radius_km?: number }): NearPoint | undefined {
  if (query.near === undefined) {
    if (query.radius_km !== undefined) throw invalidParam('query', 'radius_km', 'needs `near` (LAT,LON)');
    return undefined;
  }
  const parts = query.near.split(',').map((part) => part.trim());
  if (parts.length !== 2 || !parts.every((part) => DECIMAL.test(part))) {
    throw invalidParam('query', 'near', 'must be LAT,LON in decimal degrees, e.g. 52.37,4.90');
  }
  const [latitude, longitude] = parts.map(Number) as [number, number];
  const errors = [];
  if (!(latitude >= -90 && latitude <= 90)) errors.push({ loc: ['query', 'near'], msg: 'latitude must be within ±90' });
  if (!(longitude >= -180 && longitude <= 180))
    errors.push({ loc: ['query', 'near'], msg: 'longitude must be within ±180' });
  if (errors.length > 0) throw new InvalidRequestError(errors);
  return { latitude, longitude, ...(query.radius_km !== undefined ? { radiusKm: query.radius_km } : {}) };
}

/** The point as the database's `earth` values are: a unit vector (migration 0012). */
function pointSql({ latitude, longitude }: NearPoint): RawBuilder<unknown> {
  const rad = Math.PI / 180;
  const [lat, lon] = [latitude * rad, longitude * rad];
  const xyz = [Math.cos(lat) * Math.cos(lon), Math.cos(lat) * Math.sin(lon), Math.sin(lat)];
  return sql`cube(array[${sql.join(xyz.map((v) => sql`${v}::float8`))}])`;
}

/** The chord between the points of the unit sphere `km` apart along its surface. */
function chordOf(km: number): number {
  return km >= Math.PI * EARTH_RADIUS_KM ? 2 : 2 * Math.sin(km / (2 * EARTH_RADIUS_KM));
}

/** What `near` adds to a list: its condition, its ordering term and its field. */
export interface Nearness {
  /** The records with a position, within the radius when one is given. */
  where: RawBuilder<boolean>;
  /** Nearest first (the chord, in index order). */
  term: OrderTerm;
  /** `distance_km`: the great-circle distance, in km to one decimal. */
  distance: RawBuilder<unknown>;
}

export function nearness(earth: string, near: NearPoint): Nearness {
  const point = pointSql(near);
  const chord = sql`(${sql.ref(earth)} <-> ${point})`;
  let where = sql<boolean>`${sql.ref(earth)} is not null`;
  if (near.radiusKm !== undefined) {
    const limit = chordOf(near.radiusKm);
    where = sql<boolean>`${sql.ref(earth)} <@ cube_enlarge(${point}, ${limit}::float8, 3) and ${chord} <= ${limit}::float8`;
  }
  return {
    where,
    term: {
      column: `near(${near.latitude},${near.longitude})`,
      expression: chord,
      direction: 'asc',
      indexOrdered: true,
    },
    distance: sql`round((${2 * EARTH_RADIUS_KM}::float8 * asin(least(1::float8, ${chord} / 2)))::numeric, 1)::float8`,
  };
}

/** Applies `near` to a list's rows: its condition and its field (the ordering is the caller's). */
export function nearRows(rows: ListQuery, near: Nearness): ListQuery {
  return rows.where(near.where).select(near.distance.as(NEAR_FIELD) as never);
}
