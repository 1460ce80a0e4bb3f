// The data of the /map page: /map/chapters.geojson and /map/events.geojson, GeoJSON
// FeatureCollections of every active chapter and every upcoming event that has coordinates, each
// feature's properties the API's list item (chapters also with country, country_code and region,
// which the page filters on). Public whatever REST_AUTH says: the page is for anyone, the records are
// the public lists the API gives, and each answer is one fixed document per data version and UTC day,
// built once and served from memory with an ETag (daily-document.ts), so it offers no way to page through
// the API or load the database (docs/api.md, "The map").
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/index.ts';
import { listMapChapters, listMapEvents } from './map.queries.ts';
import { dailyDocument, sendDailyDocument } from './daily-document.ts';
import { GEOJSON_TYPE } from '../http/negotiate.ts';

const GEOJSON = 'application/geo+json; charset=utf-8';

interface Located {
  latitude: number | null;
  longitude: number | null;
}

function featureCollection<R extends Located>(rows: R[], properties: (row: R) => Record<string, unknown>): string {
  const features = rows.map((row) => ({
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [row.longitude, row.latitude] },
    properties: properties(row),
  }));
  return JSON.stringify({ type: 'FeatureCollection', features });
}

const iso = (value: Date | string) => new Date(value).toISOString();

const DOCUMENTS: Record<string, (db: Db) => Promise<string>> = {
  chapters: async (db) =>
    featureCollection(await listMapChapters(db), (c) => ({
      key: c.key,
      name: c.name,
      latitude: c.latitude,
      longitude: c.longitude,
      created_at: iso(c.created_at),
      updated_at: iso(c.updated_at),
      country: c.country,
      country_code: c.country_code,
      region: c.region,
    })),
  events: async (db) =>
    featureCollection(await listMapEvents(db), (e) => ({
      key: e.key,
      name: e.name,
      start_date: e.start_date,
      end_date: e.end_date,
      latitude: e.latitude,
      longitude: e.longitude,
      url: e.url,
    })),
};

export function mapDataRoutes(app: FastifyInstance): void {
  for (const [name, build] of Object.entries(DOCUMENTS)) {
    const document = dailyDocument(app, build);
    app.get(`/map/${name}.geojson`, { schema: { hide: true }, config: { offers: [GEOJSON_TYPE] } }, (request, reply) =>
      sendDailyDocument(request, reply, document, GEOJSON),
    );
  }
}
