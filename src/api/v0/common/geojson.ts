// GeoJSON (RFC 7946) answers of the lists that hold places: `Accept: application/geo+json` (or `format=geojson`) on
// /chapters/ and /events/ gives a FeatureCollection of Points, each list item as the properties of its
// feature. A list opts in with `geo` (the columns of its coordinates); listRoute negotiates (formats.ts) and
// fetchPage renders. Same filters, ordering and pages as the JSON list, over the records that have both
// coordinates: a record without them has no geometry and is left out before paging, so every page is
// full and `count` is the number of features across all pages (docs/decisions.md, geo-map).
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { Type, type TObject } from '@sinclair/typebox';
import { GEOJSON_TYPE } from '../../../http/negotiate.ts';
import type { Page, PageInfo } from './page.ts';

export { GEOJSON_TYPE };

/** Where a list's records keep their coordinates (`chapters.latitude`), in WGS 84 degrees. */
export interface GeoColumns {
  latitude: string;
  longitude: string;
  /** The column of each feature's `id` (OGC API – Features, api/ogc/); the lists' features have none. */
  id?: string;
}

/** Only the records that can be drawn: both coordinates known. */
export function located<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  geo: GeoColumns,
): SelectQueryBuilder<DB, TB, O> {
  return query.where(sql.ref(geo.longitude), 'is not', null).where(sql.ref(geo.latitude), 'is not', null);
}

/** The coordinates beside each row of the page (`__lng`, `__lat`), for featureJson. */
export function coordinateColumns(geo: GeoColumns): RawBuilder<unknown>[] {
  return [
    sql`${sql.ref(geo.longitude)}`.as('__lng') as never,
    sql`${sql.ref(geo.latitude)}`.as('__lat') as never,
    ...(geo.id ? [sql`${sql.ref(geo.id)}`.as('__id') as never] : []),
  ];
}

/**
 * One feature as the database writes it: a Point in [longitude, latitude] order, the item as properties (and, with
 * `withId`, the `id` of coordinateColumns before them).
 * Concatenated rather than json_build_object, which writes `"type" : "Feature"` with spaces; the numbers
 * go through to_json as they do in row_to_json, so coordinates read exactly as the properties do.
 */
export function featureJson(properties: RawBuilder<unknown>, withId = false): RawBuilder<unknown> {
  const id = withId ? sql`'"id":' || to_json(t.__id)::text || ','` : sql`''`;
  return sql`('{"type":"Feature",' || ${id} || '"geometry":{"type":"Point","coordinates":[' || to_json(t.__lng)::text || ',' || to_json(t.__lat)::text || ']},"properties":' || ${properties}::text || '}')`;
}

/**
 * The FeatureCollection around features already rendered; the page fields of the JSON envelope are its foreign members,
 * and OGC API – Features' `numberMatched` and `numberReturned`, so that a GIS tool that reads one page (GDAL does not
 * follow `Link`) shows how many features it left out (issue 45).
 */
export function featureCollectionJson(features: string, info: PageInfo, { page }: Page, returned: number): string {
  return (
    `{"type":"FeatureCollection","features":[${features}],"numberMatched":${info.count},"numberReturned":${returned},` +
    `"count":${info.count},"total_count":${info.count},"current_page":${page},` +
    `"total_pages":${info.total_pages},"has_next":${info.has_next},"has_previous":${info.has_previous}}`
  );
}

const Position = Type.Array(Type.Number(), {
  minItems: 2,
  maxItems: 2,
  description: '[longitude, latitude] in degrees (WGS 84), in this order (RFC 7946).',
  examples: [[-0.1278, 51.5074]],
});

/** The OpenAPI schema of a list's GeoJSON answer (`ChapterFeatureCollection`). */
export function FeatureCollectionBody(item: TObject, name: string) {
  const feature = Type.Object(
    {
      type: Type.Literal('Feature'),
      geometry: Type.Object({ type: Type.Literal('Point'), coordinates: Position }, { title: 'Point' }),
      properties: item,
    },
    { title: `${name}Feature` },
  );
  return Type.Object(
    {
      type: Type.Literal('FeatureCollection'),
      features: Type.Array(feature, {
        description: 'The records of this page that have both coordinates, in the list order.',
      }),
      numberMatched: Type.Integer({
        description:
          'Records matching the filters that have coordinates (the features of all pages), as OGC API – Features ' +
          'names it: `numberMatched - numberReturned` features are on other pages (`Link` header, or /ogc/).',
      }),
      numberReturned: Type.Integer({ description: 'The features of this page.' }),
      count: Type.Integer({
        description: 'Records matching the filters that have coordinates (the features of all pages).',
      }),
      total_count: Type.Integer({ description: 'Same as `count`.' }),
      current_page: Type.Integer(),
      total_pages: Type.Integer(),
      has_next: Type.Boolean(),
      has_previous: Type.Boolean(),
    },
    { title: `${name}FeatureCollection` },
  );
}
