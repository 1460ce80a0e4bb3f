// The two filters OGC API – Features adds to a list's query (ogc.routes.ts): the bounding box and one feature's key.
import { sql } from 'kysely';
import type { ListQuery } from '../v0/common/pagination.ts';
import type { GeoColumns } from '../v0/common/geojson.ts';

/** WGS 84 degrees: west, south, east, north; west > east crosses the antimeridian (OGC API – Features 1.0, 7.15.3). */
export interface Box {
  west: number;
  south: number;
  east: number;
  north: number;
}

/** The records whose point lies in the box, its edges included. */
export function withinBox(query: ListQuery, geo: GeoColumns, box: Box): ListQuery {
  const lng = sql.ref(geo.longitude);
  const lat = sql.ref(geo.latitude);
  const inLatitude = query.where(sql<boolean>`${lat} between ${box.south} and ${box.north}`);
  if (box.west <= box.east) return inLatitude.where(sql<boolean>`${lng} between ${box.west} and ${box.east}`);
  return inLatitude.where(sql<boolean>`(${lng} >= ${box.west} or ${lng} <= ${box.east})`);
}

/** The record whose key column equals `key`. */
export function withKey(query: ListQuery, column: string, key: string): ListQuery {
  return query.where(sql.ref(column), '=', key);
}
